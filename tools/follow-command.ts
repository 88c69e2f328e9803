/**
 * `kvlog import status|cutover [--endpoint URL] [--timeout MS] [-o table|json]`: asks a server started with
 * --follow-etcd (its native HTTP port: --endpoint, else $KVLOG_ENDPOINT, else http://127.0.0.1:8379) for
 * its follow status, or to cut over (follow-routes.ts). An error answer exits 1 with its stable code.
 */
import { KvlogError, type ErrorCode } from '../log/index.js'
import type { FollowStatus } from '../apiserver/etcd-follow/etcd-follower.js'

const DEFAULT_ENDPOINT = 'http://127.0.0.1:8379'

export interface FollowCommand {
  verb: 'status' | 'cutover'
  endpoint?: string
  timeoutMs?: number
  output: 'table' | 'json'
}

export async function runFollowCommand(c: FollowCommand, write: (line: string) => void): Promise<void> {
  let base = c.endpoint ?? (process.env.KVLOG_ENDPOINT || DEFAULT_ENDPOINT)
  if (!/^https?:\/\//.test(base)) base = `http://${base}`
  const url = `${base.replace(/\/$/, '')}/v1/follow${c.verb === 'cutover' ? '/cutover' : ''}`
  const init: RequestInit =
    c.verb === 'cutover'
      ? {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(c.timeoutMs === undefined ? {} : { timeoutMs: c.timeoutMs }),
        }
      : { method: 'GET' }
  const response = await fetch(url, init).catch((err: unknown) => {
    throw new KvlogError('UNAVAILABLE', `cannot reach ${base}: ${err instanceof Error ? err.message : String(err)}`)
  })
  const body = (await response.json().catch(() => ({}))) as { error?: { code?: string; message?: string } }
  if (!response.ok) {
    if (response.status === 404 && body.error?.code !== 'READ_ONLY')
      throw new KvlogError('NOT_FOUND', `${base} does not follow an etcd (no /v1/follow)`)
    throw new KvlogError((body.error?.code ?? 'INTERNAL') as ErrorCode, body.error?.message ?? `HTTP ${response.status}`)
  }
  const s = body as FollowStatus
  if (c.output === 'json') return write(JSON.stringify(s))
  const lines = [
    ['STATE', s.state],
    ['ETCD', s.endpoint],
    ['REVISION', String(s.revision)],
    ['ETCD REVISION', String(s.sourceRevision)],
    ['LAG', `${s.lagRevisions} revisions, ${s.lagSeconds.toFixed(1)} s`],
    ...(s.cutoverRevision !== undefined ? [['CUTOVER REVISION', String(s.cutoverRevision)]] : []),
    ...(s.error !== undefined ? [['LAST ERROR', `${s.error.code}: ${s.error.message}`]] : []),
  ]
  for (const [k, v] of lines) write(`${k.padEnd(17)}${v}`)
}
