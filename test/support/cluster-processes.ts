/**
 * Real `kvlog serve` cluster members over a NATS cluster (nats-cluster.ts), for integration tests: each
 * member has its own data dir (kept across restarts of the member) and the same --nats-url and
 * --cluster-name. Small HTTP helpers read and write through a chosen member's native API.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startNatsCluster, type NatsCluster } from './nats-cluster.js'
import { startServerProcess, type ServerProcess } from './server-process.js'
import { sleep } from './wait.js'

export interface Member {
  name: string
  dir: string
  args: string[]
  proc: ServerProcess | undefined
  readonly http: string
  readonly grpc: string
}

export interface ClusterProcesses {
  members: Member[]
  start(i: number): Promise<void>
  /** Ends member i with a signal and waits for it to exit (its data dir stays). */
  stop(i: number, signal?: NodeJS.Signals): Promise<void>
  cleanup(): Promise<void>
}

export async function startMembers(
  nats: NatsCluster,
  clusterName: string,
  count = 3,
  extraArgs: string[] = [],
  /** Fills a member's data dir before its first start (e.g. with a copy of an imported store). */
  seed?: (dir: string) => Promise<void>,
): Promise<ClusterProcesses> {
  const root = await mkdtemp(join(tmpdir(), 'kvlog-members-'))
  const members: Member[] = []
  for (let i = 0; i < count; i++) {
    const name = `m${i}`
    const member: Member = {
      name,
      dir: join(root, name),
      proc: undefined,
      // At info: tests read the engine's progress lines (leadership, snapshots, refills).
      args: ['--nats-url', nats.urls, '--cluster-name', clusterName, '--member-name', name, '--log-level', 'info', ...extraArgs],
      get http() {
        if (this.proc === undefined) throw new Error(`${name} is not running`)
        return this.proc.http
      },
      get grpc() {
        if (this.proc === undefined) throw new Error(`${name} is not running`)
        return this.proc.grpc
      },
    }
    members.push(member)
  }
  const start = async (i: number): Promise<void> => {
    const m = members[i]
    m.proc = await startServerProcess(m.args, m.dir, { readyTimeoutMs: 30_000 })
  }
  const stop = async (i: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
    const p = members[i].proc
    members[i].proc = undefined
    if (p === undefined) return
    await p.stop(signal)
    await p.cleanup()
  }
  const cluster: ClusterProcesses = {
    members,
    start,
    stop,
    cleanup: async () => {
      for (let i = 0; i < members.length; i++) await stop(i, 'SIGKILL').catch(() => undefined)
      await rm(root, { recursive: true, force: true })
    },
  }
  try {
    if (seed) for (const m of members) await seed(m.dir)
    for (let i = 0; i < count; i++) await start(i)
  } catch (err) {
    await cluster.cleanup()
    throw err
  }
  return cluster
}

export async function putKey(member: Member, key: string, value: string): Promise<number> {
  const res = await fetch(`${member.http}/v1/kv`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key, value }),
    // The server answers within clusterRequestTimeout (10 s) plus its outcome checks; a put that gets no
    // answer at all fails here instead of stalling its caller.
    signal: AbortSignal.timeout(30_000),
  })
  const body = (await res.json()) as { header: { revision: number }; error?: { code: string } }
  if (!res.ok) throw new Error(`put ${key} on ${member.name}: ${res.status} ${JSON.stringify(body)}`)
  return body.header.revision
}

export interface KvLine {
  key: string
  value: string
  createRevision: number
  modRevision: number
  version: number
}

export async function listPrefix(member: Member, prefix: string): Promise<{ revision: number; kvs: KvLine[] }> {
  const res = await fetch(`${member.http}/v1/kv?key=${encodeURIComponent(prefix)}&prefix=true`)
  const body = (await res.json()) as { header: { revision: number }; kvs: KvLine[] }
  if (!res.ok) throw new Error(`list on ${member.name}: ${res.status} ${JSON.stringify(body)}`)
  return { revision: body.header.revision, kvs: body.kvs }
}

/** Waits until the member's /readyz answers 200 (caught up with the log). */
export async function waitReady(member: Member, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const res = await fetch(`${member.http}/readyz`).catch(() => undefined)
    if (res?.ok) return
    if (Date.now() > deadline) throw new Error(`${member.name} not ready after ${timeoutMs} ms`)
    await sleep(100)
  }
}

/** Runs `tasks` with at most `concurrency` at once. */
export async function runConcurrently(count: number, concurrency: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < count) await task(next++)
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
}

/**
 * Registers before/after hooks in the calling describe block: three nats-servers and `count` members of
 * cluster `clusterName`, all ready before the first test, all stopped after the last. Read it in tests.
 */
export function clusterPerBlock(clusterName: string, count = 3, extraArgs: string[] = []): () => ClusterProcesses {
  let nats: NatsCluster | undefined
  let cluster: ClusterProcesses | undefined
  before(async function () {
    this.timeout(120_000)
    nats = await startNatsCluster()
    cluster = await startMembers(nats, clusterName, count, extraArgs)
    for (const m of cluster.members) await waitReady(m)
  })
  after(async function () {
    this.timeout(60_000)
    await cluster?.cleanup()
    await nats?.stop()
  })
  return () => cluster!
}
