/**
 * Starts a real etcd (Debian's /usr/bin/etcd, 3.4) on loopback for compatibility tests: a temp data dir,
 * free ports for the client and peer URLs (never the default 2379/2380, which a packaged etcd service may
 * hold), a one-member cluster with short raft timers so it elects itself quickly, and a stop that kills it
 * and removes the data dir.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ETCDCTL_BIN } from './etcdctl.js'
import { freePort } from './free-port.js'
import { sleep } from './wait.js'

export const ETCD_BIN = process.env.ETCD_BIN ?? '/usr/bin/etcd'

export interface EtcdProcess {
  readonly child: ChildProcess
  /** host:port of the client URL (what etcdctl --endpoints and gRPC clients take). */
  endpoint: string
  /** With options.tls: host:port of the TLS client URL. */
  tlsEndpoint?: string
  dataDir: string
  stderr(): string
  /** Kills etcd (SIGTERM, then SIGKILL after 5 s) and removes its data dir. */
  stop(): Promise<void>
  /** Ends etcd with `signal` (default SIGKILL) and starts it again on the same data dir and ports. */
  restart(signal?: NodeJS.Signals): Promise<void>
}

export interface EtcdOptions {
  /** Extra flags, e.g. ['--max-request-bytes', '1024']. */
  args?: string[]
  /** Also serve clients over TLS, on another port (tlsEndpoint), asking for client certificates signed by `ca`. */
  tls?: { cert: string; key: string; ca: string }
  /** Start from this snapshot file: `etcdctl snapshot restore` makes the data dir for this member first. */
  restoreFrom?: string
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = createConnection({ host: '127.0.0.1', port })
    sock.once('connect', () => {
      sock.destroy()
      resolve(true)
    })
    sock.once('error', () => resolve(false))
  })
}

/** `etcdctl snapshot restore` into `dataDir` (which must be empty) for the member startOnce starts. */
async function restoreInto(file: string, dataDir: string, peer: string, token: string): Promise<void> {
  await rm(dataDir, { recursive: true, force: true })
  const args = ['snapshot', 'restore', file, '--data-dir', dataDir, '--name', 'compat', '--initial-cluster', `compat=${peer}`]
  args.push('--initial-advertise-peer-urls', peer, '--initial-cluster-token', token)
  const out = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const child = spawn(ETCDCTL_BIN, args, { env: { ...process.env, ETCDCTL_API: '3' }, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr!.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stderr }))
  })
  if (out.code !== 0) throw new Error(`etcdctl snapshot restore ${file} failed (${out.code}): ${out.stderr}`)
}

export async function startEtcd(o: EtcdOptions = {}): Promise<EtcdProcess> {
  // Two free ports can still race with another process between close and bind: retry a few times.
  let lastError: unknown
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(o)
    } catch (e) {
      lastError = e
    }
  }
  throw lastError
}

async function startOnce(o: EtcdOptions): Promise<EtcdProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), 'kvlog-etcd-'))
  const clientPort = await freePort()
  let peerPort = await freePort()
  while (peerPort === clientPort) peerPort = await freePort()
  const tlsPort = o.tls ? await freePort() : undefined
  const plain = `http://127.0.0.1:${clientPort}`
  const client = tlsPort === undefined ? plain : `${plain},https://127.0.0.1:${tlsPort}`
  const tlsArgs = o.tls ? ['--cert-file', o.tls.cert, '--key-file', o.tls.key, '--trusted-ca-file', o.tls.ca, '--client-cert-auth'] : []
  const peer = `http://127.0.0.1:${peerPort}`
  if (o.restoreFrom !== undefined) await restoreInto(o.restoreFrom, dataDir, peer, `compat-${clientPort}`)
  const args = [
    '--name',
    'compat',
    '--data-dir',
    dataDir,
    '--listen-client-urls',
    client,
    '--advertise-client-urls',
    client,
    '--listen-peer-urls',
    peer,
    '--initial-advertise-peer-urls',
    peer,
    '--initial-cluster',
    `compat=${peer}`,
    '--initial-cluster-state',
    'new',
    '--initial-cluster-token',
    `compat-${clientPort}`,
    // A single member elects itself after one election timeout: keep it short for a quick start.
    '--heartbeat-interval',
    '10',
    '--election-timeout',
    '100',
    '--logger',
    'zap',
    '--log-level',
    'error',
    ...tlsArgs,
    ...(o.args ?? []),
  ]
  let stderr = ''
  let child: ChildProcess
  let exited: Promise<void>
  const launch = () => {
    child = spawn(ETCD_BIN, args, { stdio: ['ignore', 'ignore', 'pipe'] })
    child.stderr!.on('data', (d) => (stderr += d))
    exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  }
  launch()
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGCONT')
      child.kill(signal)
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
      await exited
      clearTimeout(timer)
    }
  }
  const stop = async () => {
    await end('SIGTERM')
    await rm(dataDir, { recursive: true, force: true })
  }
  const restart = async (signal: NodeJS.Signals = 'SIGKILL') => {
    await end(signal)
    launch()
    await waitReady(child, clientPort, () => stderr)
  }
  try {
    await waitReady(child!, clientPort, () => stderr)
  } catch (e) {
    await stop()
    throw e
  }
  const tlsEndpoint = tlsPort === undefined ? {} : { tlsEndpoint: `127.0.0.1:${tlsPort}` }
  return {
    get child() {
      return child
    },
    endpoint: `127.0.0.1:${clientPort}`,
    ...tlsEndpoint,
    dataDir,
    stderr: () => stderr,
    stop,
    restart,
  }
}

/**
 * Ready = the client port accepts connections and the member has a leader: a quorum read through the
 * /health endpoint of the client URL answers {"health":"true"}.
 */
async function waitReady(child: ChildProcess, port: number, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 15_000
  while (true) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`etcd exited (${child.exitCode ?? child.signalCode}): ${stderr()}`)
    if (Date.now() > deadline) throw new Error(`etcd did not get ready: ${stderr()}`)
    if (await canConnect(port)) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/health`)
        const body = (await res.json()) as { health?: string }
        if (body.health === 'true') return
      } catch {
        // not serving yet
      }
    }
    await sleep(50)
  }
}
