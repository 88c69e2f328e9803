/**
 * Helpers for watch tests: events as comparable text, the full history, draining a watch, a writer, and
 * the processes a test starts.
 */
import type { KvlogClient, Watch, WatchBatch, WatchEvent } from '../../clients/index.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { sleep } from '../support/wait.js'
import { TcpProxy } from './tcp-proxy.js'

/** An event as comparable text: everything the history and the watch both carry. */
export function show(e: WatchEvent): string {
  const kv = e.kv
  const prev = e.prevKv ? `${e.prevKv.value.toString('hex')}@${e.prevKv.modRevision}` : '-'
  return `${e.revision} ${e.type} ${kv.key.toString('hex')}=${kv.value.toString('hex')} c${kv.createRevision} m${kv.modRevision} v${kv.version} prev:${prev}`
}

/** GET /v1/history from `from` on, every page. */
export async function fullHistory(kv: KvlogClient, key: string, from: number): Promise<string[]> {
  const out: string[] = []
  let next = from
  for (;;) {
    const h = await kv.history(key, { prefix: true, from: next, prevKv: true, limit: 1000 })
    out.push(...h.events.map(show))
    if (!h.more) return out
    next = h.nextRevision
  }
}

/** Drains a watch's iterator in the background. */
export function collect(w: Watch): { batches: WatchBatch[]; events: () => WatchEvent[]; done: Promise<Error | undefined> } {
  const batches: WatchBatch[] = []
  const done = (async () => {
    try {
      for await (const b of w) batches.push(b)
      return undefined
    } catch (err) {
      return err as Error
    }
  })()
  return { batches, events: () => batches.flatMap((b) => b.events), done }
}

/** A writer that keeps writing (puts, updates, deletes) under a prefix until stopped; failures are skipped. */
export function writer(client: () => KvlogClient, prefix: string, opts: { pauseMs?: number; max?: number } = {}) {
  let stopped = false
  let ok = 0
  let failed = 0
  let last = 0
  const done = (async () => {
    for (let i = 0; !stopped && i < (opts.max ?? Infinity); i++) {
      try {
        const k = `${prefix}${i % 7}`
        const r = i % 5 === 4 ? await client().delete(k) : await client().put(k, JSON.stringify({ i }))
        if (r.revision > last) last = r.revision
        ok++
      } catch {
        failed++
        await sleep(30)
      }
      if (opts.pauseMs) await sleep(opts.pauseMs)
    }
  })()
  return {
    stop: async () => {
      stopped = true
      await done
    },
    done,
    get ok() {
      return ok
    },
    get failed() {
      return failed
    },
    get last() {
      return last
    },
  }
}

/**
 * Servers, proxies and watches a test starts, stopped after each test (registers an afterEach hook: call
 * it inside a describe).
 */
export function processFixtures() {
  const cleanups: Array<() => Promise<void>> = []
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
  })
  return {
    async server(args: string[] = [], dataDir?: string): Promise<ServerProcess> {
      const s = await startServerProcess(args, dataDir)
      cleanups.push(() => s.cleanup())
      return s
    },
    async proxyTo(s: ServerProcess): Promise<TcpProxy> {
      const p = await TcpProxy.start(s.http)
      cleanups.push(() => p.close())
      return p
    },
    track(w: Watch): Watch {
      cleanups.push(async () => w.close())
      return w
    },
  }
}
