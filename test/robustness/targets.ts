/**
 * What the robustness traffic runs against, each behind one TCP proxy per member (network faults):
 *
 * - etcd: a real etcd 3.4 (Debian's), one member; takes process and network faults only;
 * - kvlog: one `kvlog serve` on its own data dir;
 * - cluster: three `kvlog serve` members over a three-server NATS JetStream cluster.
 *
 * kvlog processes start with KVLOG_FAILPOINTS when the run has a failpoint, held back until arm() (the
 * file named by armedBy appears). A member that dies (a failpoint's panic, a kill) is started again by the
 * supervisor on the same data dir, without failpoints, and its proxy pointed at the new port.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TcpProxy } from '../clients/tcp-proxy.js'
import { startMembers, type ClusterProcesses } from '../support/cluster-processes.js'
import { startEtcd, type EtcdProcess } from '../support/etcd-process.js'
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { sleep } from '../support/wait.js'

export type TargetName = 'etcd' | 'kvlog' | 'cluster'

export interface Target {
  name: TargetName
  /** host:port of each member's proxy. */
  endpoints: string[]
  proxies: TcpProxy[]
  /** Lets the failpoints act. */
  arm(): Promise<void>
  /** SIGKILL member i (it is started again). */
  kill(i: number): Promise<void>
  /** SIGSTOP member i for `ms`, then SIGCONT. */
  pause(i: number, ms: number): Promise<void>
  /** Waits until every member runs again. */
  heal(): Promise<void>
  /** Failpoint hits so far, from every process's stderr. */
  failpointHits(): number
  restarts(): number
  stop(): Promise<void>
}

const hitsIn = (stderr: string) => stderr.split('kvlog failpoint: ').length - 1
const proxyTarget = (hostPort: string) => `http://${hostPort}`

export async function startTarget(name: TargetName, failpoints: string | undefined): Promise<Target> {
  if (name === 'etcd') return startEtcdTarget()
  const root = await mkdtemp(join(tmpdir(), 'kvlog-robust-'))
  const armFile = join(root, 'arm')
  const env = failpoints === undefined ? undefined : `${failpoints};armedBy=${armFile}`
  const arm = () => writeFile(armFile, '')
  const t = name === 'kvlog' ? await startKvlog(root, env) : await startCluster(env)
  return {
    ...t,
    arm,
    stop: async () => {
      await t.stop()
      await rm(root, { recursive: true, force: true })
    },
  }
}

/** Starts processes with KVLOG_FAILPOINTS set to `env` (the environment of this process stays as it was). */
async function withFailpoints<T>(env: string | undefined, start: () => Promise<T>): Promise<T> {
  if (env === undefined) return start()
  process.env.KVLOG_FAILPOINTS = env
  try {
    return await start()
  } finally {
    delete process.env.KVLOG_FAILPOINTS
  }
}

async function startEtcdTarget(): Promise<Target> {
  const etcd: EtcdProcess = await startEtcd()
  const proxy = await TcpProxy.start(proxyTarget(etcd.endpoint))
  proxy.keepSent = false
  let restarts = 0
  let paused: Promise<void> = Promise.resolve()
  return {
    name: 'etcd',
    endpoints: [proxy.url.replace('http://', '')],
    proxies: [proxy],
    arm: async () => undefined,
    kill: async () => {
      restarts++
      await etcd.restart('SIGKILL')
    },
    pause: async (_i, ms) => {
      etcd.child.kill('SIGSTOP')
      paused = sleep(ms).then(() => void etcd.child.kill('SIGCONT'))
      await paused
    },
    heal: () => paused,
    failpointHits: () => 0,
    restarts: () => restarts,
    stop: async () => {
      await proxy.close()
      await etcd.stop()
    },
  }
}

type Started = Omit<Target, 'arm'>

async function startKvlog(root: string, env: string | undefined): Promise<Started> {
  const dataDir = join(root, 'data')
  let proc: ServerProcess = await withFailpoints(env, () => startServerProcess([], dataDir))
  const proxy = await TcpProxy.start(proxyTarget(proc.grpc))
  proxy.keepSent = false
  const supervisor = supervise(
    1,
    () => proc,
    async () => {
      await proc.cleanup()
      proc = await startServerProcess([], dataDir)
      proxy.setTarget(proxyTarget(proc.grpc))
    },
  )
  return {
    name: 'kvlog',
    endpoints: [proxy.url.replace('http://', '')],
    proxies: [proxy],
    kill: async () => {
      await proc.stop('SIGKILL')
      await supervisor.heal()
    },
    pause: (_i, ms) => pauseProcess(proc, ms),
    heal: supervisor.heal,
    failpointHits: () => supervisor.hits(),
    restarts: () => supervisor.restarts,
    stop: async () => {
      supervisor.stop()
      await proxy.close()
      await proc.cleanup()
    },
  }
}

async function startCluster(env: string | undefined): Promise<Started> {
  const nats: NatsCluster = await startNatsCluster(3)
  let cluster: ClusterProcesses
  try {
    cluster = await withFailpoints(env, () => startMembers(nats, 'robust', 3))
  } catch (err) {
    await nats.stop()
    throw err
  }
  const proxies = await Promise.all(cluster.members.map((m) => TcpProxy.start(proxyTarget(m.grpc))))
  for (const p of proxies) p.keepSent = false
  const supervisor = supervise(
    3,
    (i) => cluster.members[i]!.proc,
    async (i) => {
      await cluster.stop(i, 'SIGKILL')
      await cluster.start(i)
      proxies[i]!.setTarget(proxyTarget(cluster.members[i]!.grpc))
    },
  )
  return {
    name: 'cluster',
    endpoints: proxies.map((p) => p.url.replace('http://', '')),
    proxies,
    kill: async (i) => {
      await cluster.members[i]!.proc?.stop('SIGKILL')
      await supervisor.heal()
    },
    pause: (i, ms) => pauseProcess(cluster.members[i]!.proc, ms),
    heal: supervisor.heal,
    failpointHits: () => supervisor.hits(),
    restarts: () => supervisor.restarts,
    stop: async () => {
      supervisor.stop()
      for (const p of proxies) await p.close()
      await cluster.cleanup()
      await nats.stop()
    },
  }
}

async function pauseProcess(proc: ServerProcess | undefined, ms: number): Promise<void> {
  proc?.child.kill('SIGSTOP')
  await sleep(ms)
  proc?.child.kill('SIGCONT')
}

/** Watches `count` processes; one that has exited is started again by `restart(i)`. */
function supervise(count: number, proc: (i: number) => ServerProcess | undefined, restart: (i: number) => Promise<void>) {
  let stopped = false
  let pastHits = 0
  const restarting = new Map<number, Promise<void>>()
  const s = {
    restarts: 0,
    hits: () => pastHits + Array.from({ length: count }, (_, i) => hitsIn(proc(i)?.stderr() ?? '')).reduce((a, b) => a + b, 0),
    stop: () => {
      stopped = true
      clearInterval(timer)
    },
    heal: async () => {
      check()
      await Promise.all(restarting.values())
    },
  }
  const check = () => {
    for (let i = 0; i < count; i++) {
      const p = proc(i)
      if (stopped || restarting.has(i) || p === undefined || (p.child.exitCode === null && p.child.signalCode === null)) continue
      pastHits += hitsIn(p.stderr())
      s.restarts++
      restarting.set(
        i,
        restart(i).finally(() => restarting.delete(i)),
      )
    }
  }
  const timer = setInterval(check, 50)
  return s
}
