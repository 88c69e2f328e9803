/**
 * The server under test and everything around it: one `kvlog serve` process on a data dir that outlives
 * it, a TCP proxy in front of every front door (HTTP + WebSocket, gRPC) (clients only ever see the proxy, so a restart on a new
 * port, a refused connection or a cut connection look to them as they would in production), the oracle
 * (the server's own history, fetched directly before anything can hide it), and the recovery read taken
 * after every restart before clients are let back in.
 *
 * `exclusive` serializes what must not overlap: an oracle fetch + compaction, a restart.
 *
 * `rootToken` (with auth enabled): a static token of user root, which the soak's own reads and faults
 * (oracle, recovery reads, compaction, snapshots) carry; it outlives restarts, unlike issued tokens.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { KvlogClient } from '../../../clients/index.js'
import { Oracle } from '../../apiserver/watch/checker.js'
import { TcpProxy } from '../../clients/tcp-proxy.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { bearer, wireKv } from '../drivers/native.js'
import type { RecoveryCheck } from '../history.js'
import { stopProcess } from '../../support/stopped.js'

const ALL = Buffer.from([0])
/** A restart that takes longer than this fails the run (generous: the machine may be shared and loaded). */
const READY_TIMEOUT_MS = 120_000

export class Cluster {
  readonly oracle = new Oracle(2)
  readonly recoveries: RecoveryCheck[] = []
  /** How long each restart took, ms: signal to clients let back in. */
  readonly restartMs: number[] = []
  /** The compact revision acknowledged last (what the oracle must cover before compacting further). */
  floor = 1
  up = false
  paused = false
  private server: ServerProcess | undefined
  private control: Promise<unknown> = Promise.resolve()

  private constructor(
    readonly dataDir: string,
    readonly args: string[],
    readonly httpProxy: TcpProxy,
    readonly grpcProxy: TcpProxy,
    readonly rootToken: string | undefined,
  ) {}

  static async start(args: string[], rootToken?: string): Promise<Cluster> {
    const dataDir = await mkdtemp(join(tmpdir(), 'kvlog-soak-'))
    const server = await startServerProcess(args, dataDir, { readyTimeoutMs: READY_TIMEOUT_MS })
    const cluster = new Cluster(dataDir, args, await TcpProxy.start(server.http), await TcpProxy.start(`http://${server.grpc}`), rootToken)
    cluster.server = server
    cluster.up = true
    return cluster
  }

  /** Where clients connect (the proxy). */
  get http(): string {
    return this.httpProxy.url
  }

  /** Where gRPC clients connect (the proxy), host:port. */
  get grpc(): string {
    return this.grpcProxy.url.replace(/^http:\/\//, '')
  }

  /** The server's gRPC address itself, bypassing the proxy. */
  get directGrpc(): string {
    if (this.server === undefined) throw new Error('the server is down')
    return this.server.grpc
  }

  /** The server itself, bypassing the proxy (oracle, recovery reads, compaction). */
  get direct(): string {
    if (this.server === undefined) throw new Error('the server is down')
    return this.server.http
  }

  get pid(): number | undefined {
    return this.server?.child.pid
  }

  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.control.then(fn, fn)
    this.control = run.catch(() => undefined)
    return run
  }

  /** The last `lines` lines the current server process printed (for a failure's message). */
  outputTail(lines = 30): string {
    return (this.server?.output() ?? '').split('\n').slice(-lines).join('\n')
  }

  /** Fetches the oracle up to the current revision (the server must be up and running). */
  fetchOracle(): Promise<number> {
    return this.oracle.fetch(this.direct, bearer(this.rootToken))
  }

  /** SIGSTOPs the server and waits until every thread has stopped (false: one still ran after the wait). */
  async pause(): Promise<boolean> {
    const pid = this.server?.child.pid
    if (!this.up || this.paused || pid === undefined) return true
    this.paused = true
    return stopProcess(pid, 'the server')
  }

  resume(): void {
    if (!this.paused) return
    this.server?.child.kill('SIGCONT')
    this.paused = false
  }

  private get proxies(): TcpProxy[] {
    return [this.httpProxy, this.grpcProxy]
  }

  /** Cuts every client connection (HTTP, WebSocket, gRPC) at the proxies. */
  dropConnections(): void {
    for (const p of this.proxies) p.cutAll()
  }

  /**
   * Stops the server with `signal` (SIGKILL: a crash), restarts it on the same data, takes the recovery
   * read, then lets clients back in. Call inside `exclusive`. Returns when clients may connect again.
   */
  async restart(signal: NodeJS.Signals, fault: string): Promise<RecoveryCheck> {
    const server = this.server!
    this.up = false
    const stopped = server.stop(signal)
    if (this.paused && signal !== 'SIGKILL') server.child.kill('SIGCONT')
    const at = performance.now()
    for (const p of this.proxies) p.refuse = true
    await stopped
    this.paused = false
    await server.cleanup() // keeps the data dir (it was passed in)
    this.dropConnections()
    this.server = await startServerProcess(this.args, this.dataDir, { readyTimeoutMs: READY_TIMEOUT_MS })
    const check = await recoveryRead(this.direct, this.recoveries.length + 1, fault, at, this.rootToken)
    this.recoveries.push(check)
    this.httpProxy.setTarget(this.server.http)
    this.grpcProxy.setTarget(`http://${this.server.grpc}`)
    for (const p of this.proxies) p.refuse = false
    this.up = true
    this.restartMs.push(Math.round(performance.now() - at))
    return check
  }

  async stop(): Promise<void> {
    this.resume()
    for (const p of this.proxies) await p.close()
    if (this.server !== undefined) {
      await this.server.stop('SIGTERM').catch(() => undefined)
      await this.server.cleanup()
    }
    await rm(this.dataDir, { recursive: true, force: true })
  }
}

/** What a server shows right after a restart: revision, compact revision, history since it, state. */
export async function recoveryRead(direct: string, index: number, fault: string, at: number, token?: string): Promise<RecoveryCheck> {
  const client = new KvlogClient({ endpoint: direct, timeoutMs: 30_000, ...(token !== undefined ? { credentials: { token } } : {}) })
  const status = await client.status()
  const revision = status.revision as number
  const compactRevision = status.compactRevision as number
  const history = new Oracle(Math.max(1, compactRevision))
  await history.fetch(direct, bearer(token))
  const kvs = revision > 1 ? (await client.range(ALL, { fromKey: true, revision })).kvs.map(wireKv) : []
  return { index, fault, at, revision, compactRevision, events: history.events.filter((e) => e.revision <= revision), kvs }
}
