/**
 * The system under the cluster soak: three nats-servers (test/support/nats-cluster.ts) and three `kvlog
 * serve` members in cluster mode, each with a data dir that outlives its process.
 *
 * - Every member reaches each nats-server through a TCP proxy of its own, and the servers do not advertise
 *   their client URLs, so the member knows only its proxies: cutting them cuts that member's NATS
 *   connection while the other members keep theirs.
 * - Clients reach each member through proxies in front of its HTTP and gRPC ports: a restarted member
 *   listens on new ports, a stopped one refuses connections, as a real one would.
 * - The oracle (the log's history, fetched from a member before any compaction could hide it) and the
 *   recovery read of a restarted member, taken once it is ready again (caught up with the stream).
 *
 * `exclusive` serializes what must not overlap: an oracle fetch + compaction, a member's restart.
 */
import { appendFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Oracle } from '../../apiserver/watch/checker.js'
import { TcpProxy } from '../../clients/tcp-proxy.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { sleep } from '../../support/wait.js'
import type { RecoveryCheck } from '../history.js'
import { bearer } from '../drivers/native.js'
import { recoveryRead } from './cluster.js'
import { stopProcess } from '../../support/stopped.js'

/** A start or restart that takes longer than this fails the run (the machine may be shared and loaded). */
const READY_TIMEOUT_MS = 120_000

export interface SoakMember {
  name: string
  dir: string
  proc: ServerProcess | undefined
  /** What clients connect to. */
  httpProxy: TcpProxy
  grpcProxy: TcpProxy
  /** One proxy per nats-server: the member's only way to NATS. */
  natsProxies: TcpProxy[]
  paused: boolean
  natsCut: boolean
}

export class SoakMembers {
  readonly oracle = new Oracle(2)
  readonly recoveries: RecoveryCheck[] = []
  /** How long each member restart took, ms: signal to ready again. */
  readonly restartMs: number[] = []
  /** The compact revision acknowledged last. */
  floor = 1
  /** Member processes that ended without being told to (each one a finding: kvlog must not crash). */
  readonly crashes: string[] = []
  /**
   * With auth enabled: a static token of user root (tokenAuthFile), carried by the oracle fetches, the
   * recovery reads and the status requests; set right after start, before any of them.
   */
  rootToken: string | undefined
  private control: Promise<unknown> = Promise.resolve()

  private constructor(
    readonly nats: NatsCluster,
    readonly members: SoakMember[],
    private readonly root: string,
    private readonly args: string[],
    private readonly clusterName: string,
    private readonly serverLogs: string | undefined,
  ) {}

  /** `serverLogs`: a directory where each member's stderr is appended (mN.log) whenever its process ends. */
  static async start(args: string[], serverLogs?: string, clusterName = 'soak', size = 3): Promise<SoakMembers> {
    const nats = await startNatsCluster(3, { noAdvertise: true })
    const root = await mkdtemp(join(tmpdir(), 'kvlog-cluster-soak-'))
    const members: SoakMember[] = []
    const set = new SoakMembers(nats, members, root, args, clusterName, serverLogs)
    try {
      for (let i = 0; i < size; i++) {
        const natsProxies = await Promise.all(nats.servers.map((s) => TcpProxy.start(`http://127.0.0.1:${s.clientPort}`)))
        // Targets are set once the member is up; until then the proxies refuse.
        const [httpProxy, grpcProxy] = [await TcpProxy.start('http://127.0.0.1:1'), await TcpProxy.start('http://127.0.0.1:1')]
        for (const p of [httpProxy, grpcProxy, ...natsProxies]) p.keepSent = false
        httpProxy.refuse = grpcProxy.refuse = true
        members.push({
          name: `m${i}`,
          dir: join(root, `m${i}`),
          proc: undefined,
          httpProxy,
          grpcProxy,
          natsProxies,
          paused: false,
          natsCut: false,
        })
      }
      // One at a time: the first creates the stream, the others join it.
      for (let i = 0; i < size; i++) await set.launch(i)
    } catch (err) {
      await set.stop()
      throw err
    }
    return set
  }

  get size(): number {
    return this.members.length
  }

  /** Member i's native door (through its proxy). */
  http(i: number): string {
    return this.members[i].httpProxy.url
  }

  /** Member i's etcd gRPC door (through its proxy), host:port. */
  grpc(i: number): string {
    return this.members[i].grpcProxy.url.replace(/^http:\/\//, '')
  }

  /** Member i itself, bypassing the proxy (oracle, recovery reads, compaction). */
  direct(i: number): string {
    const p = this.members[i].proc
    if (p === undefined) throw new Error(`${this.members[i].name} is down`)
    return p.http
  }

  /** Members that run and are not paused (their NATS connection may be cut). */
  live(): number[] {
    return this.members.flatMap((m, i) => (m.proc !== undefined && !m.paused ? [i] : []))
  }

  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.control.then(fn, fn)
    this.control = run.catch(() => undefined)
    return run
  }

  /** The leader's index as a live member with NATS reports it, or undefined (none elected, none answered). */
  async leader(): Promise<number | undefined> {
    for (const i of this.live()) {
      if (this.members[i].natsCut) continue
      try {
        const res = await fetch(`${this.direct(i)}/v1/status`, { signal: AbortSignal.timeout(5000), headers: bearer(this.rootToken) })
        const body = (await res.json()) as { cluster?: { leader?: string } }
        const at = this.members.findIndex((m) => m.name === body.cluster?.leader)
        if (at >= 0) return at
      } catch {
        // ask the next one
      }
    }
    return undefined
  }

  /** Fetches the oracle up to a live member's current revision (any member: they share one history). */
  async fetchOracle(): Promise<number> {
    let last: unknown
    for (const i of this.live().filter((j) => !this.members[j].natsCut)) {
      // A member still catching up answers a shorter history: the oracle keeps what it has.
      const before = this.oracle.last
      try {
        await this.oracle.fetch(this.direct(i), bearer(this.rootToken))
        this.oracle.last = Math.max(before, this.oracle.last)
        return this.oracle.last
      } catch (err) {
        this.oracle.last = Math.max(before, this.oracle.last)
        last = err
      }
    }
    throw new Error(`oracle: no member answered: ${String(last)}`)
  }

  /** SIGSTOPs member i and waits until every thread has stopped (false: one still ran after the wait). */
  async pause(i: number): Promise<boolean> {
    const m = this.members[i]
    const pid = m.proc?.child.pid
    if (pid === undefined || m.paused) return true
    m.paused = true
    return stopProcess(pid, m.name)
  }

  resume(i: number): void {
    const m = this.members[i]
    if (!m.paused) return
    m.proc?.child.kill('SIGCONT')
    m.paused = false
  }

  /** Cuts member i's connections to every nats-server and refuses new ones until healNats(i). */
  cutNats(i: number): void {
    const m = this.members[i]
    m.natsCut = true
    for (const p of m.natsProxies) {
      p.refuse = true
      p.cutAll()
    }
  }

  healNats(i: number): void {
    const m = this.members[i]
    m.natsCut = false
    for (const p of m.natsProxies) p.refuse = false
  }

  /**
   * Stops member i with `signal` (SIGKILL: a crash), restarts it on the same data, waits until it is
   * ready (caught up), takes the recovery read, then lets clients back in. Call inside `exclusive`.
   */
  async restart(i: number, signal: NodeJS.Signals, fault: string): Promise<RecoveryCheck> {
    const m = this.members[i]
    const at = performance.now()
    m.httpProxy.refuse = true
    m.grpcProxy.refuse = true
    const proc = m.proc
    if (proc !== undefined) {
      m.proc = undefined
      const stopped = proc.stop(signal)
      if (m.paused && signal !== 'SIGKILL') proc.child.kill('SIGCONT')
      await stopped
      await this.keepLog(m, proc)
      await proc.cleanup() // keeps the data dir (it was passed in)
    }
    m.paused = false
    m.httpProxy.cutAll()
    m.grpcProxy.cutAll()
    await this.launch(i)
    const check = await recoveryRead(this.direct(i), this.recoveries.length + 1, `${fault} ${m.name}`, at, this.rootToken)
    this.recoveries.push(check)
    this.restartMs.push(Math.round(performance.now() - at))
    return check
  }

  /** Starts member i on its data dir, waits for /readyz, points its proxies at it and lets clients in. */
  private async launch(i: number): Promise<void> {
    const m = this.members[i]
    const natsUrls = m.natsProxies.map((p) => p.url.replace(/^http:/, 'nats:')).join(',')
    m.proc = await startServerProcess(
      ['--nats-url', natsUrls, '--cluster-name', this.clusterName, '--member-name', m.name, ...this.args],
      m.dir,
      { readyTimeoutMs: READY_TIMEOUT_MS },
    )
    const proc = m.proc
    // The server's own log lines (stdout) go with its stderr into serverLogs.
    if (this.serverLogs !== undefined) {
      const file = join(this.serverLogs, `${m.name}.log`)
      proc.child.stdout?.on('data', (d: Buffer) => void appendFile(file, d))
    }
    proc.child.once('exit', (code, signal) => {
      if (m.proc !== proc) return
      const tail = proc.stderr().trim().split('\n').slice(-12).join('\n')
      this.crashes.push(`${m.name} exited with ${code ?? signal}:\n${tail}`)
      m.proc = undefined
      m.httpProxy.refuse = m.grpcProxy.refuse = true
      void this.keepLog(m, proc)
    })
    await waitReady(m.proc.http, READY_TIMEOUT_MS)
    m.httpProxy.setTarget(m.proc.http)
    m.grpcProxy.setTarget(`http://${m.proc.grpc}`)
    m.httpProxy.refuse = false
    m.grpcProxy.refuse = false
  }

  private async keepLog(m: SoakMember, proc: ServerProcess): Promise<void> {
    if (this.serverLogs !== undefined) await appendFile(join(this.serverLogs, `${m.name}.log`), proc.stderr())
  }

  /** Starts again every member that crashed (call inside `exclusive`). */
  async restartCrashed(): Promise<void> {
    for (let i = 0; i < this.size; i++) if (this.members[i].proc === undefined) await this.restart(i, 'SIGKILL', 'crash')
  }

  /** Restarts every member that crashed, then waits until every member is ready (caught up with the stream). */
  async allReady(timeoutMs = READY_TIMEOUT_MS): Promise<void> {
    await this.restartCrashed()
    for (let i = 0; i < this.size; i++) await waitReady(this.direct(i), timeoutMs)
  }

  async stop(): Promise<void> {
    for (let i = 0; i < this.members.length; i++) {
      const m = this.members[i]
      this.resume(i)
      for (const p of [m.httpProxy, m.grpcProxy, ...m.natsProxies]) await p.close()
      const proc = m.proc
      if (proc !== undefined) {
        m.proc = undefined
        await proc.stop('SIGTERM').catch(() => undefined)
        await this.keepLog(m, proc)
        await proc.cleanup()
      }
    }
    for (let i = 0; i < this.nats.servers.length; i++) this.nats.resume(i)
    await this.nats.stop()
    await rm(this.root, { recursive: true, force: true })
  }
}

async function waitReady(http: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const res = await fetch(`${http}/readyz`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined)
    if (res?.ok) return
    if (performance.now() > deadline) throw new Error(`${http} not ready after ${timeoutMs} ms`)
    await sleep(100)
  }
}
