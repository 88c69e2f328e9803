/**
 * What an attack did to a running `kvlog serve`: its peak resident memory (VmHWM from /proc), how long
 * /healthz on the native port takes to answer, and the event loop's largest delay since the last look
 * (prom-client's monitorEventLoopDelay gauge on /metrics, reset at each scrape).
 */
import { readFile } from 'node:fs/promises'

export async function peakRssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kb = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1]
  if (kb === undefined) throw new Error(`no VmHWM for ${pid}`)
  return Number(kb) * 1024
}

/** Milliseconds /healthz took to answer 200; throws if it did not. */
export async function healthzMs(http: string): Promise<number> {
  const started = performance.now()
  const res = await fetch(`${http}/healthz`, { signal: AbortSignal.timeout(30_000) })
  await res.arrayBuffer()
  if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`)
  return performance.now() - started
}

/** The event loop's largest delay since the previous call, milliseconds. */
export async function eventLoopMaxMs(http: string): Promise<number> {
  const res = await fetch(`${http}/metrics`, { signal: AbortSignal.timeout(30_000) })
  const text = await res.text()
  const line = /^kvlog_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)
  if (line === null) throw new Error('no kvlog_nodejs_eventloop_lag_max_seconds on /metrics')
  return Number(line[1]) * 1000
}

export interface Figures {
  healthzMs: number
  eventLoopMaxMs: number
  peakRssMiB: number
}

/** All three figures of a server at once (the event loop's delay since the last look). */
export async function figures(http: string, pid: number): Promise<Figures> {
  return { healthzMs: await healthzMs(http), eventLoopMaxMs: await eventLoopMaxMs(http), peakRssMiB: (await peakRssBytes(pid)) / MiB }
}

/**
 * Turns auth on through the etcd port's JSON gateway (a root user, then AuthEnable), so that requests'
 * credentials are read as they are in a deployment.
 */
export async function enableAuth(etcdAddress: string): Promise<void> {
  const call = async (path: string, body: object) => {
    const res = await fetch(`http://${etcdAddress}/v3/auth/${path}`, { method: 'POST', body: JSON.stringify(body) })
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`)
  }
  await call('user/add', { name: 'root', password: 'root-password' })
  await call('user/grant', { user: 'root', role: 'root' })
  await call('enable', {})
}

export const MiB = 1024 * 1024

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))
