/**
 * Starts a three-server NATS JetStream cluster (Debian's /usr/sbin/nats-server 2.9) on loopback for the
 * cluster engine's tests: each server has its own store dir under one temp dir, free loopback ports for
 * its client and route listeners, a `server_name`, and routes to the others. start() resolves once a
 * JetStream request is answered through every server (the meta leader is elected); stop() kills every
 * server and removes the temp dir. Single servers can be stopped, killed, paused (SIGSTOP) and restarted.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from 'nats'
import { TcpProxy } from '../clients/tcp-proxy.js'
import { freePort } from './free-port.js'
import { stopProcess } from './stopped.js'
import { sleep } from './wait.js'

export const NATS_SERVER_BIN = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server'

export interface NatsServer {
  name: string
  clientPort: number
  url: string
  /** The server's HTTP monitoring endpoint (/jsz, /connz). */
  monitorUrl: string
  child: ChildProcess | undefined
  log(): string
}

export interface NatsCluster {
  servers: NatsServer[]
  /** Every server's client URL, comma separated (what --nats-url takes). */
  urls: string
  dir: string
  /** SIGKILL (or SIGTERM) one server and wait for it to exit. */
  kill(i: number, signal?: NodeJS.Signals): Promise<void>
  /**
   * SIGSTOP one server and wait until every thread of it has stopped (stopped.ts stopProcess: false when
   * one still ran after the wait); SIGCONT it.
   */
  pause(i: number): Promise<boolean>
  resume(i: number): void
  /** Starts a stopped server again with the same store dir and ports. */
  restart(i: number): Promise<void>
  /**
   * With `routeProxies`: cuts every route between server i and the others (each way), and refuses new
   * ones, so server i runs on, reachable by its clients, but alone; heal() lets the routes connect again.
   */
  partition(i: number): void
  heal(i: number): void
  stop(): Promise<void>
}

export interface NatsClusterOptions {
  /**
   * The servers do not tell clients the other servers' client URLs (cluster `no_advertise`), so a client
   * knows only the URLs it was given: a test can put TCP proxies in front of the servers and cut them.
   */
  noAdvertise?: boolean
  /**
   * Every route goes through a TCP proxy of its own (one per direction and pair of servers), and the
   * servers advertise no reachable route address, so the routes are only the proxied ones and
   * partition(i) can cut a server off from the others while its clients still reach it.
   */
  routeProxies?: boolean
}

export async function startNatsCluster(size = 3, options: NatsClusterOptions = {}): Promise<NatsCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'kvlog-nats-'))
  const ports: Array<{ client: number; route: number; monitor: number }> = []
  for (let i = 0; i < size; i++) ports.push({ client: await freePort(), route: await freePort(), monitor: await freePort() })
  // routeProxy[i][j]: server i's route to server j.
  const routeProxy: Array<Array<TcpProxy | undefined>> = []
  if (options.routeProxies === true) {
    for (let i = 0; i < size; i++) {
      routeProxy.push([])
      for (let j = 0; j < size; j++) routeProxy[i].push(i === j ? undefined : await TcpProxy.start(`http://127.0.0.1:${ports[j].route}`))
    }
  }
  const routeUrl = (i: number, j: number): string => {
    const proxy = routeProxy[i]?.[j]
    return proxy === undefined ? `nats-route://127.0.0.1:${ports[j].route}` : proxy.url.replace(/^http:/, 'nats-route:')
  }
  // Gossiped to the others for routes they were not given: nothing listens there.
  const unreachable = options.routeProxies === true ? await freePort() : undefined
  const servers: NatsServer[] = []
  const logs: string[] = []
  const spawnServer = async (i: number): Promise<void> => {
    const name = `n${i}`
    const store = join(dir, name)
    await mkdir(store, { recursive: true })
    const routes = ports
      .map((_, j) => j)
      .filter((j) => j !== i)
      .map((j) => `"${routeUrl(i, j)}"`)
      .join(', ')
    const advertise = unreachable === undefined ? '' : `, advertise: "127.0.0.1:${unreachable}"`
    const conf = join(dir, `${name}.conf`)
    await writeFile(
      conf,
      [
        `server_name: ${name}`,
        `listen: "127.0.0.1:${ports[i].client}"`,
        `http: "127.0.0.1:${ports[i].monitor}"`,
        // Above maxRequestBytes (1.5 MiB): one write request must fit in one stream message.
        'max_payload: 8MB',
        `jetstream { store_dir: "${store}", max_memory_store: 64MB, max_file_store: 1GB }`,
        `cluster { name: kvlogtest, listen: "127.0.0.1:${ports[i].route}", routes: [${routes}]${options.noAdvertise ? ', no_advertise: true' : ''}${advertise} }`,
        '',
      ].join('\n'),
    )
    const child = spawn(NATS_SERVER_BIN, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] })
    logs[i] = ''
    child.stderr?.on('data', (d: Buffer) => {
      logs[i] = (logs[i] + d.toString()).slice(-20_000)
    })
    servers[i].child = child
  }
  for (let i = 0; i < size; i++) {
    servers.push({
      name: `n${i}`,
      clientPort: ports[i].client,
      url: `nats://127.0.0.1:${ports[i].client}`,
      monitorUrl: `http://127.0.0.1:${ports[i].monitor}`,
      child: undefined,
      log: () => logs[i],
    })
  }
  const kill = async (i: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
    const child = servers[i].child
    if (child === undefined) return
    servers[i].child = undefined
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise<void>((r) => child.once('exit', () => r()))
    child.kill('SIGCONT')
    child.kill(signal)
    await exited
  }
  const cluster: NatsCluster = {
    servers,
    urls: servers.map((s) => s.url).join(','),
    dir,
    kill,
    pause: async (i) => {
      const pid = servers[i].child?.pid
      return pid === undefined || (await stopProcess(pid, `nats-server ${servers[i].name}`))
    },
    resume: (i) => servers[i].child?.kill('SIGCONT'),
    partition: (i) => {
      for (let j = 0; j < size; j++) {
        for (const proxy of [routeProxy[i]?.[j], routeProxy[j]?.[i]]) {
          if (proxy === undefined) continue
          proxy.refuse = true
          proxy.cutAll()
        }
      }
    },
    heal: (i) => {
      for (let j = 0; j < size; j++)
        for (const proxy of [routeProxy[i]?.[j], routeProxy[j]?.[i]]) if (proxy !== undefined) proxy.refuse = false
    },
    restart: async (i) => {
      await spawnServer(i)
      await waitJetStream(servers[i].url, 20_000)
    },
    stop: async () => {
      for (let i = 0; i < size; i++) await kill(i)
      for (const proxy of routeProxy.flat()) await proxy?.close()
      await rm(dir, { recursive: true, force: true })
    },
  }
  try {
    for (let i = 0; i < size; i++) await spawnServer(i)
    for (const s of servers) await waitJetStream(s.url, 30_000)
  } catch (err) {
    await cluster.stop()
    throw new Error(`nats cluster did not start: ${String(err)}\n${logs.join('\n')}`, { cause: err })
  }
  return cluster
}

/** Waits until the server answers a JetStream account-info request (JetStream's meta leader is up). */
async function waitJetStream(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  while (Date.now() < deadline) {
    try {
      const nc = await connect({ servers: url, reconnect: false, timeout: 1000 })
      try {
        const jsm = await nc.jetstreamManager({ timeout: 1000 })
        await jsm.getAccountInfo()
        return
      } finally {
        await nc.close()
      }
    } catch (err) {
      last = err
      await sleep(200)
    }
  }
  throw new Error(`JetStream at ${url} not ready: ${String(last)}`)
}
