/**
 * Starting and stopping the two systems under comparison on loopback, each on its own data dir with
 * durable writes: a real etcd 3.4 (Debian's etcd-server, fsync on by default) and `kvlog serve`
 * (--fsync always). Both get the same 8 GiB backend quota and no automatic compaction.
 *
 * "Ready" is measured the same way for both: from spawn to the first gRPC Range that succeeds.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '../../test/support/free-port.js'
import { waitForRange } from './grpc.js'

const KVLOG_BIN = fileURLToPath(new URL('../../../bin/kvlog', import.meta.url))
const ETCD_BIN = process.env.ETCD_BIN ?? 'etcd'
const QUOTA = String(8 * 1024 ** 3)

export type SystemName = 'kvlog' | 'etcd'

export interface System {
  name: SystemName
  /** gRPC "host:port". */
  grpc: string
  /** kvlog's native HTTP base URL (kvlog only). */
  http?: string
  dataDir: string
  pid(): number
  /** CPU seconds (user + system) the server process has used so far, all its threads. */
  cpuSeconds(): Promise<number>
  /** The same for its main thread alone (for kvlog, the event loop; LevelDB and libuv's pool are not in it). */
  mainThreadCpuSeconds(): Promise<number>
  /** Resident set size of the server process, bytes. */
  rss(): Promise<number>
  /**
   * Bytes the store holds on disk: kvlog's LevelDB directory (its write-ahead log included); etcd's
   * backend file member/snap/db (what `etcdctl endpoint status` reports; its raft WAL is not counted).
   */
  diskBytes(): Promise<number>
  /**
   * Bytes of its write-ahead log: kvlog's LevelDB log files (NNNNNN.log: the writes not yet in a table,
   * also counted by diskBytes); etcd's raft WAL member/wal (preallocated 64 MB segments; not in diskBytes).
   */
  walBytes(): Promise<number>
  /** Stops the process (SIGTERM, then SIGKILL after 10 s); the data dir stays. */
  stop(): Promise<void>
  /** Starts it again on the same data dir and ports; resolves with the ms until it answered a Range. */
  restart(): Promise<number>
  /** Stops it and removes its data dir. */
  destroy(): Promise<void>
}

/** Fails with how to install etcd when it is missing. */
export function checkEtcdInstalled(): string {
  const r = spawnSync(ETCD_BIN, ['--version'], { encoding: 'utf8' })
  if (r.error || r.status !== 0) {
    throw new Error(
      "etcd not found. Install Debian's etcd 3.4 with `sudo apt-get install etcd-server etcd-client` " +
        '(or set ETCD_BIN to an etcd 3.4 binary; etcdctl must be on PATH for `check perf`).',
    )
  }
  return /etcd Version: (\S+)/.exec(r.stdout)?.[1] ?? 'unknown'
}

/**
 * CPU seconds (user + system) a process has used, from /proc/<pid>/stat (clock ticks, USER_HZ = 100), or
 * its main thread alone from /proc/<pid>/task/<pid>/stat.
 */
export async function cpuSecondsOf(pid: number, mainThread = false): Promise<number> {
  const stat = await readFile(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024
}

/** Sum of the sizes of the files under dir, each file once however many names it has (as du counts). */
export async function bytesUnder(path: string, seen = new Set<number>()): Promise<number> {
  const s = await stat(path).catch(() => undefined)
  if (s === undefined) return 0
  if (!s.isDirectory()) {
    if (seen.has(s.ino)) return 0
    seen.add(s.ino)
    return s.size
  }
  let total = 0
  for (const entry of await readdir(path)) total += await bytesUnder(join(path, entry), seen)
  return total
}

/** LevelDB's write-ahead log files in a directory (NNNNNN.log; not its text LOG). */
async function levelDbLogBytes(dir: string): Promise<number> {
  let total = 0
  for (const entry of await readdir(dir)) if (/^\d+\.log$/.test(entry)) total += await bytesUnder(join(dir, entry))
  return total
}

interface Launch {
  command: string
  args: string[]
}

async function startSystem(
  name: SystemName,
  launch: () => Launch,
  grpc: string,
  dataDir: string,
  root: string,
  disk: { total(): Promise<number>; wal(): Promise<number> },
  http?: string,
): Promise<System> {
  let child: ChildProcess
  let exited: Promise<void>
  let stderr = ''
  const spawnIt = async (): Promise<number> => {
    const { command, args } = launch()
    const started = performance.now()
    stderr = ''
    child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] })
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)))
    exited = new Promise((resolve) => child.on('exit', () => resolve()))
    try {
      await waitForRange(grpc, 300_000)
    } catch (err) {
      throw new Error(`${name} did not start: ${String(err)}\n${stderr}`, { cause: err })
    }
    return performance.now() - started
  }
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(kill)
  }
  await spawnIt()
  return {
    name,
    grpc,
    http,
    dataDir,
    pid: () => child.pid!,
    cpuSeconds: () => cpuSecondsOf(child.pid!),
    mainThreadCpuSeconds: () => cpuSecondsOf(child.pid!, true),
    rss: () => rssOf(child.pid!),
    diskBytes: () => disk.total(),
    walBytes: () => disk.wal(),
    stop,
    restart: async () => {
      await stop()
      return spawnIt()
    },
    destroy: async () => {
      await stop()
      await rm(root, { recursive: true, force: true })
    },
  }
}

/**
 * Starts one etcd member; its data dir is `root`/data, in a new temporary `root` unless one is given.
 * `extraArgs` are added to its flags (a later flag overrides an earlier one).
 */
export async function startEtcd(extraArgs: string[] = [], given?: { root: string }): Promise<System> {
  const root = given?.root ?? (await mkdtemp(join(tmpdir(), 'bench-etcd-')))
  const [client, peer] = [await freePort(), await freePort()]
  return startEtcdMember('b', join(root, 'data'), root, client, peer, `b=http://127.0.0.1:${peer}`, extraArgs)
}

/**
 * One etcd member on loopback ports; `initialCluster` names every member's peer URL (name=url,...).
 * `root` is removed by destroy().
 */
export function startEtcdMember(
  name: string,
  dataDir: string,
  root: string,
  client: number,
  peer: number,
  initialCluster: string,
  extraArgs: string[] = [],
): Promise<System> {
  const clientUrl = `http://127.0.0.1:${client}`
  const peerUrl = `http://127.0.0.1:${peer}`
  const args = [
    '--name',
    name,
    '--data-dir',
    dataDir,
    '--listen-client-urls',
    clientUrl,
    '--advertise-client-urls',
    clientUrl,
    '--listen-peer-urls',
    peerUrl,
    '--initial-advertise-peer-urls',
    peerUrl,
    '--initial-cluster',
    initialCluster,
    '--initial-cluster-state',
    'new',
    '--quota-backend-bytes',
    QUOTA,
    '--logger',
    'zap',
    '--log-level',
    'error',
    ...extraArgs,
  ]
  return startSystem('etcd', () => ({ command: ETCD_BIN, args }), `127.0.0.1:${client}`, dataDir, root, {
    total: () => bytesUnder(join(dataDir, 'member', 'snap', 'db')),
    wal: () => bytesUnder(join(dataDir, 'member', 'wal')),
  })
}

/**
 * Extra Node.js flags for the kvlog server process only, e.g. BENCH_KVLOG_NODE_ARGS="--cpu-prof
 * --cpu-prof-dir=/tmp/prof" to profile the server under a workload (Node refuses --cpu-prof in NODE_OPTIONS; the name must not start with KVLOG_, which kvlog serve reads as settings).
 */
const KVLOG_NODE_ARGS = (process.env.BENCH_KVLOG_NODE_ARGS ?? '').split(' ').filter((a) => a !== '')

/**
 * Starts `kvlog serve`; `bin` runs another build's bin/kvlog (a baseline checkout, for before/after). Its
 * data dir is `root`/data, in a new temporary `root` unless one is given (a store built there beforehand).
 */
export async function startKvlog(extraArgs: string[] = [], bin = KVLOG_BIN, given?: { root: string }): Promise<System> {
  const root = given?.root ?? (await mkdtemp(join(tmpdir(), 'bench-kvlog-')))
  const dataDir = join(root, 'data')
  const [grpc, http] = [await freePort(), await freePort()]
  const args = [
    ...KVLOG_NODE_ARGS,
    bin,
    'serve',
    '--data-dir',
    dataDir,
    '--listen-grpc',
    `127.0.0.1:${grpc}`,
    '--listen-http',
    `127.0.0.1:${http}`,
    '--fsync',
    'always',
    '--quota-backend-bytes',
    QUOTA,
    '--log-level',
    'warn',
    ...extraArgs,
  ]
  return startSystem(
    'kvlog',
    () => ({ command: process.execPath, args }),
    `127.0.0.1:${grpc}`,
    dataDir,
    root,
    { total: () => bytesUnder(dataDir), wal: () => levelDbLogBytes(dataDir) },
    `http://127.0.0.1:${http}`,
  )
}
