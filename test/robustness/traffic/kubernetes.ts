/**
 * Traffic shaped like kube-apiserver's (its etcd3 storage): pods under /registry/pods/<ns>/<name>.
 *
 * - writes, about half the requests: 90 % optimistic update `Txn(mod_revision == rv) Then Put Else Range`
 *   (rv: the mod revision this client last saw for the object), 5 % create `Txn(mod_revision == 0) Then Put
 *   Else Range`, 5 % delete `Txn(mod_revision == rv) Then Delete Else Range`; a failed compare refreshes rv
 *   from the Else Range as the apiserver's GuaranteedUpdate does;
 * - reads: 80 % list-then-watch (paged Range, limit 5, every page at the first page's revision R with the
 *   key after the last one as the continue, then a Watch from R + 1 with prev_kv and progress_notify that
 *   lives for a second or two, asked for progress every 100 ms), 10 % Get, 10 % stale Get (at the last list
 *   revision, or serializable);
 * - one compactor, as the apiserver's compactor: every 100–200 ms `Txn(version(compact_rev_key) == v) Then
 *   Put(compact_rev_key, rev) Else Get(compact_rev_key)`, then, if it won, Compact(rev) for the revision
 *   it saw the round before.
 */
import type { Output, RangeReq } from '../linearizability/types.js'
import { isError } from '../linearizability/types.js'
import type { RecordingClient } from './client.js'
import { eachClient, pause, pick, type Profile, type TrafficContext } from './traffic.js'
import { RecordedWatch } from './watcher.js'

const PREFIX = '/registry/pods/'
const PREFIX_END = '/registry/pods0'
const NAMESPACES = ['default', 'kube-system']
const PODS_PER_NAMESPACE = 8
export const COMPACT_REV_KEY = 'compact_rev_key'
const PAGE = 5

const podKey = (random: () => number) => `${PREFIX}${pick(random, NAMESPACES)}/pod-${Math.floor(random() * PODS_PER_NAMESPACE)}`

interface ClientState {
  rv: Map<string, number>
  lastListRevision: number
  watch: RecordedWatch | undefined
}

export const kubernetes: Profile = {
  name: 'kubernetes',
  async run(ctx) {
    const [compactor, ...clients] = ctx.clients
    await Promise.all([compactLoop(ctx, compactor!), trafficLoop(ctx, clients)])
  },
}

async function trafficLoop(ctx: TrafficContext, clients: RecordingClient[]): Promise<void> {
  const states = new Map(
    clients.map((c) => [c.id, { rv: new Map<string, number>(), lastListRevision: 0, watch: undefined } as ClientState]),
  )
  await eachClient(ctx, clients, async (c) => {
    const s = states.get(c.id)!
    if (ctx.random() < 0.5) await write(ctx, c, s)
    else await read(ctx, c, s)
  })
  for (const s of states.values()) s.watch?.end()
}

async function write(ctx: TrafficContext, c: RecordingClient, s: ClientState): Promise<void> {
  const key = podKey(ctx.random)
  const rv = s.rv.get(key)
  const r = ctx.random()
  const elseRange = [{ type: 'range' as const, req: { key } }]
  let out: Output
  if (rv === undefined || r < 0.05) {
    out = await c.txn([{ key, target: 'MOD', result: 'EQUAL', value: 0 }], [{ type: 'put', key, value: ctx.value(c.id) }], elseRange)
  } else if (r < 0.1) {
    out = await c.txn([{ key, target: 'MOD', result: 'EQUAL', value: rv }], [{ type: 'delete', key }], elseRange)
  } else {
    out = await c.txn([{ key, target: 'MOD', result: 'EQUAL', value: rv }], [{ type: 'put', key, value: ctx.value(c.id) }], elseRange)
  }
  if (isError(out) || !('succeeded' in out)) return
  const first = out.results[0]
  if (out.succeeded) {
    if (first?.type === 'delete') s.rv.delete(key)
    else s.rv.set(key, out.revision)
  } else if (first?.type === 'range') {
    const kv = first.kvs[0]
    if (kv === undefined) s.rv.delete(key)
    else s.rv.set(key, kv.mod)
  }
}

async function read(ctx: TrafficContext, c: RecordingClient, s: ClientState): Promise<void> {
  const r = ctx.random()
  if (r < 0.8 && s.watch === undefined) return listThenWatch(ctx, c, s)
  const key = podKey(ctx.random)
  if (r < 0.9 || s.lastListRevision === 0) {
    const out = await c.range({ key })
    if (!isError(out) && 'range' in out) {
      const kv = out.range.kvs[0]
      if (kv === undefined) s.rv.delete(key)
      else s.rv.set(key, kv.mod)
    }
    return
  }
  if (ctx.random() < 0.5) await c.range({ key, revision: s.lastListRevision })
  else await c.range({ key, serializable: true })
}

async function listThenWatch(ctx: TrafficContext, c: RecordingClient, s: ClientState): Promise<void> {
  let req: RangeReq = { key: PREFIX, end: PREFIX_END, limit: PAGE }
  let revision = 0
  for (;;) {
    const out = await c.range(req)
    if (isError(out) || !('range' in out)) return
    if (revision === 0) revision = out.revision
    for (const kv of out.range.kvs) s.rv.set(kv.key, kv.mod)
    const last = out.range.kvs.at(-1)
    if (!out.range.more || last === undefined) break
    req = { key: `${last.key}\0`, end: PREFIX_END, limit: PAGE, revision }
  }
  s.lastListRevision = revision
  const watch = new RecordedWatch(
    c.g,
    `c${c.id}.w${ctx.watches.length}`,
    { key: PREFIX, end: PREFIX_END, startRevision: revision + 1, prevKv: true },
    ctx.watches,
    { progressNotify: true, progressEveryMs: 100 },
  )
  s.watch = watch
  setTimeout(
    () => {
      watch.end()
      if (s.watch === watch) s.watch = undefined
    },
    1000 + ctx.random() * 1000,
  )
}

async function compactLoop(ctx: TrafficContext, c: RecordingClient): Promise<void> {
  let version = 0
  let seen = 0
  while (!ctx.done()) {
    await pause(ctx.random, 100, 200)
    const out = await c.txn(
      [{ key: COMPACT_REV_KEY, target: 'VERSION', result: 'EQUAL', value: version }],
      [{ type: 'put', key: COMPACT_REV_KEY, value: String(seen) }],
      [{ type: 'range', req: { key: COMPACT_REV_KEY } }],
    )
    if (isError(out) || !('succeeded' in out)) continue
    const first = out.results[0]
    if (out.succeeded) {
      version++
      if (seen > 0) await c.compact(seen)
    } else if (first?.type === 'range') {
      version = first.kvs[0]?.version ?? 0
    }
    seen = out.revision
  }
}
