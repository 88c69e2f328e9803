/**
 * lease grant TTL [--id ID] | revoke ID | list | ttl ID [--keys] | keep-alive ID [--once]
 *
 * Lease ids are taken as decimal or as hex (as etcdctl prints them: `694d7b5a1d2c3e0b`, or 0x...); tables
 * print them in hex, as etcdctl does, and JSON gives both: `id` (decimal string) and `idHex`. 64-bit ids
 * are never rounded through a JS number.
 */
import { KvlogClientError, UnreachableError } from '../../errors.js'
import { leaseHex, leaseIdArg, UsageError } from '../args.js'
import { bool, str, type Context } from '../context.js'
import { display, table, text } from '../output.js'

const USAGE = 'lease grant TTL [--id ID] | revoke ID | list | ttl ID [--keys] | keep-alive ID [--once]'
/** Which flags each verb takes (beyond the common ones). */
const VERB_FLAGS: Record<string, string[]> = { grant: ['id'], revoke: [], list: [], ttl: ['keys'], 'keep-alive': ['once'] }

export async function lease(c: Context): Promise<number> {
  const [verb, arg] = c.p.args
  const allowed = VERB_FLAGS[verb]
  if (allowed === undefined) throw new UsageError(`unknown subcommand ${JSON.stringify(verb)}: ${USAGE}`)
  for (const flag of ['id', 'keys', 'once']) {
    if (c.p.flags.has(flag) && !allowed.includes(flag)) throw new UsageError(`--${flag} does not apply to lease ${verb}`)
  }
  if (verb === 'list' && arg !== undefined) throw new UsageError(`unexpected argument ${arg}`)
  switch (verb) {
    case 'grant':
      return grant(c, arg)
    case 'revoke': {
      const id = leaseIdArg(arg)
      const r = await c.client.leaseRevoke(id)
      c.out(
        c.mode === 'json'
          ? JSON.stringify({ id, idHex: leaseHex(id), revision: r.revision })
          : `lease ${leaseHex(id)} revoked (revision ${r.revision})`,
      )
      return 0
    }
    case 'list':
      return list(c)
    case 'ttl':
      return timeToLive(c, leaseIdArg(arg))
    default:
      return keepAlive(c, leaseIdArg(arg))
  }
}

async function grant(c: Context, ttlText: string | undefined): Promise<number> {
  if (ttlText === undefined || !/^[0-9]{1,16}$/.test(ttlText))
    throw new UsageError(`lease grant TTL: expected a TTL in seconds, got ${JSON.stringify(ttlText ?? '')}`)
  const id = str(c, 'id')
  const g = await c.client.leaseGrant(Number(ttlText), id === undefined ? {} : { id: leaseIdArg(id, '--id') })
  c.out(
    c.mode === 'json'
      ? JSON.stringify({ id: g.id.toString(), idHex: leaseHex(g.id), ttl: g.ttl })
      : `lease ${leaseHex(g.id)} granted with TTL ${g.ttl}s (decimal ${g.id})`,
  )
  return 0
}

/** Every lease with its remaining and granted TTL (one that expires meanwhile is left out). */
async function list(c: Context): Promise<number> {
  const ids = await c.client.leases()
  const rows: Array<{ id: string; idHex: string; ttl: number; grantedTtl: number }> = []
  // A few at a time: a long list should not open hundreds of connections at once.
  for (let i = 0; i < ids.length; i += 16) {
    const infos = await Promise.all(ids.slice(i, i + 16).map((id) => c.client.leaseTimeToLive(id)))
    for (const t of infos)
      if (t !== undefined) rows.push({ id: t.id.toString(), idHex: leaseHex(t.id), ttl: t.ttl, grantedTtl: t.grantedTtl })
  }
  rows.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1))
  if (c.mode === 'json') c.out(JSON.stringify({ leases: rows }))
  else c.out(table([['ID', 'DECIMAL', 'TTL', 'GRANTED'], ...rows.map((r) => [r.idHex, r.id, `${r.ttl}s`, `${r.grantedTtl}s`])]))
  return 0
}

async function timeToLive(c: Context, id: string): Promise<number> {
  const withKeys = bool(c, 'keys')
  const t = await c.client.leaseTimeToLive(id, { keys: withKeys })
  if (t === undefined)
    throw new KvlogClientError('LEASE_NOT_FOUND', `lease ${leaseHex(id)} not found (never granted, revoked or expired)`, 404)
  if (c.mode === 'json') {
    const keys = t.keys?.map((k) => (text(k) !== undefined ? { key: text(k) } : { keyBase64: k.toString('base64') }))
    c.out(JSON.stringify({ id, idHex: leaseHex(id), ttl: t.ttl, grantedTtl: t.grantedTtl, ...(keys ? { keys } : {}) }))
    return 0
  }
  c.out(
    table([
      ['id', `${leaseHex(id)} (decimal ${id})`],
      ['ttl', `${t.ttl}s remaining`],
      ['granted ttl', `${t.grantedTtl}s`],
      ...(t.keys ? [['keys', t.keys.length === 0 ? '(none)' : t.keys.map(display).join(', ')]] : []),
    ]),
  )
  return 0
}

/**
 * Refreshes the lease every third of its TTL until SIGINT/SIGTERM (exit 0), or once with --once. The
 * lease gone (LEASE_NOT_FOUND) is exit 1; an unreachable server is retried until the lease would have
 * expired anyway.
 */
async function keepAlive(c: Context, id: string): Promise<number> {
  const report = (ttl: number) =>
    c.out(c.mode === 'json' ? JSON.stringify({ id, idHex: leaseHex(id), ttl }) : `lease ${leaseHex(id)} kept alive, TTL ${ttl}s`)
  if (bool(c, 'once')) {
    report((await c.client.leaseKeepAlive(id)).ttl)
    return 0
  }
  let stopped = false
  let wake = () => {}
  const stop = () => {
    stopped = true
    wake()
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  try {
    let ttl = 0
    let aliveUntil = Infinity
    while (!stopped) {
      let pause: number
      try {
        ttl = (await c.client.leaseKeepAlive(id)).ttl
        aliveUntil = Date.now() + ttl * 1000
        report(ttl)
        pause = Math.max(500, (ttl * 1000) / 3)
      } catch (err) {
        if (!(err instanceof UnreachableError) || Date.now() >= aliveUntil) throw err
        process.stderr.write(`lease keep-alive: ${err.message}; retrying\n`)
        pause = 500
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pause)
        wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    }
    return 0
  } finally {
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
  }
}
