/**
 * npm run bench:scale [-- --gib G] [--small-gib G] [--etcd-gib G] [--seconds S] [--rounds N] [--list-keys N]
 *   [--dir DIR] [-o json | --json]
 *
 * kvlog on a big store beside a small one, the same workloads on each: is it as fast at G GiB (default 20,
 * ten times etcd's default 2 GiB quota) as at --small-gib (default 1)? And beside them etcd on as much of
 * the big store as etcd can hold. Each kvlog store is grown offline through the import path (grow.ts:
 * every key of 1–2 KiB written twice, so it has history), under DIR (default the system's temporary
 * directory). The etcd store (a real etcd 3.4, quota 8 GiB, its documented maximum) is grown through
 * etcd's own API (grow-etcd.ts: the same keys and values, two versions each, in Txns over several
 * connections) with the big store's keys, or as many as keep its backend under --etcd-gib (default the
 * smaller of G and 7.5; 0 leaves etcd out). Then each store is served (`kvlog serve --fsync always`;
 * etcd with its durable defaults), one at a time, in `--rounds` rounds (3) that alternate the order of the
 * stores (as bench:compare's rounds do); each figure is the median of its rounds:
 *
 *   restart      ms from spawn until a gRPC Range answers, after a first open (SIGTERM, start again)
 *   get, put     p50 and p99 of gRPC point gets (64 clients) and of 1.5 KiB puts over the same keys (64
 *                clients), closed loop for S seconds each (default 10), through bench:compare's generators
 *   list         a paged list of --list-keys keys (a power of ten, default 100,000; bench:compare's big
 *                list: pages of 500 at one revision), and the server's RSS growth during it
 *   compaction   Compact(head, physical) time, then Defragment's, and the store's bytes on disk before,
 *                after the compaction and after Defragment (once, after the rounds)
 *
 * Prints each figure for every store, big / small and big / etcd; `-o json` (or --json) ends with one
 * JSON line. The stores are removed at the end. Progress goes to the terminal.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Message } from '../../apiserver/etcd/proto.js'
import { call, connect, put } from '../compare/grpc.js'
import { runLoad, runMain } from '../compare/generators.js'
import { checkEtcdInstalled, startEtcd, startKvlog, type System } from '../compare/systems.js'
import { median } from '../compare/figures.js'
import { measureBigList } from '../compare/workloads/big-list.js'
import { benchOptions, exitWithUsageError, JSON_OPTION } from '../lib/options.js'
import { endProgress, formatNumber, progress, table } from '../lib/report.js'
import { growStore, keysFor, SCALE_PREFIX } from './grow.js'
import { growEtcd } from './grow-etcd.js'

const GiB = 1024 ** 3
const MB = 1e6
/** The most the etcd arm's backend is grown to by default: under etcd's largest quota (8 GiB), with room for the loads' puts. */
const ETCD_MAX_GIB = 7.5
/**
 * etcd's flags beside bench:compare's (systems.ts): a snapshot every 10,000 raft entries (etcd 3.6's
 * default; 3.4's 100,000 would keep that many of the growth's Txns in its memory).
 */
const ETCD_ARGS = ['--snapshot-count', '10000']

const args = benchOptions('npm run bench:scale -- [options]: kvlog on a big store beside a small one, and etcd on as much as it can hold', {
  gib: { kind: 'number', default: 20, positive: true, value: 'G', help: "the big kvlog store's size, GiB" },
  'small-gib': { kind: 'number', default: 1, positive: true, value: 'G', help: "the small kvlog store's size, GiB" },
  'etcd-gib': {
    kind: 'number',
    shown: `the smaller of --gib and ${ETCD_MAX_GIB}`,
    value: 'G',
    help: "the most etcd's backend is grown to, GiB (0: no etcd)",
  },
  seconds: { kind: 'number', default: 10, positive: true, value: 'S', help: 'seconds of each load (gets, puts) per store and round' },
  rounds: { kind: 'number', default: 3, positive: true, help: 'rounds, alternating the order of the stores' },
  'list-keys': { kind: 'number', default: 100_000, help: 'keys of the paged list, a power of ten from 10 to 10^8' },
  dir: { kind: 'string', value: 'DIR', help: "where the stores are grown (default the system's temporary directory)" },
  json: JSON_OPTION,
  output: { kind: 'string', short: 'o', choices: ['json', 'table'], default: 'table', help: '-o json: the same as --json' },
})
const json = args.json || args.output === 'json'
const seconds = args.seconds
const listKeys = args['list-keys']
const digits = Math.log10(listKeys)
if (!Number.isInteger(digits) || digits < 1 || digits > 8)
  exitWithUsageError(`--list-keys must be a power of ten from 10 to 10^8, got '${listKeys}'`)
/** The list: every key under this prefix, keys 0 to listKeys - 1 (8-digit names). */
const LIST_PREFIX = SCALE_PREFIX + '0'.repeat(8 - digits)

/** What a round measures on one store. */
interface Round {
  restartMs: number
  getP50: number
  getP99: number
  getsPerSec: number
  putP50: number
  putP99: number
  putsPerSec: number
  listMs: number
  listRssGrowthMb: number
  listAnonGrowthMb: number
}

type Kind = 'kvlog' | 'etcd'

interface Store {
  kind: Kind
  /** The size asked for (kvlog), or the most its backend was let grow to (etcd). */
  gib: number
  root: string
  keys: number
  revisions: number
  growSeconds: number
  rounds: Round[]
  compactionMs: number
  defragmentMs: number
  diskBeforeCompactMb: number
  diskAfterCompactMb: number
  diskAfterDefragmentMb: number
}

const T0 = Date.now()
const note = (text: string) => {
  progress(text)
  if (!process.stderr.isTTY) process.stderr.write(`${((Date.now() - T0) / 1000).toFixed(0)}s ${text}\n`)
}

const nameOf = (store: Store) => `${store.kind} ${store.gib} GiB`

function newStore(kind: Kind, gib: number, root: string): Store {
  return {
    kind,
    gib,
    root,
    keys: 0,
    revisions: 0,
    growSeconds: NaN,
    rounds: [],
    compactionMs: NaN,
    defragmentMs: NaN,
    diskBeforeCompactMb: NaN,
    diskAfterCompactMb: NaN,
    diskAfterDefragmentMb: NaN,
  }
}

function enoughKeys(keys: number, what: string): void {
  if (keys < listKeys) throw new Error(`${what} holds ${keys} keys, fewer than the list's ${listKeys}: give a larger size`)
}

async function grow(base: string, gib: number): Promise<Store> {
  const keys = keysFor(gib * GiB)
  enoughKeys(keys, `a ${gib} GiB store`)
  const store = newStore('kvlog', gib, await mkdtemp(join(base, 'bench-scale-')))
  const started = Date.now()
  const grown = await growStore(join(store.root, 'data'), keys, (done, total) =>
    note(`${nameOf(store)}: grown ${formatNumber(done)} of ${formatNumber(total)} revisions`),
  )
  const growSeconds = (Date.now() - started) / 1000
  note(`${nameOf(store)}: grown in ${growSeconds.toFixed(0)} s`)
  return { ...store, keys, revisions: grown.revisions, growSeconds }
}

/** The etcd store: up to `keys` keys, its backend at most `gib` GiB. */
async function growEtcdStore(base: string, gib: number, keys: number): Promise<Store> {
  const store = newStore('etcd', gib, await mkdtemp(join(base, 'bench-scale-etcd-')))
  const system = await start(store)
  const started = Date.now()
  try {
    const grown = await growEtcd(system.grpc, keys, gib * GiB, (done, total) =>
      note(`${nameOf(store)}: grown ${formatNumber(done)} of ${formatNumber(total)} keys (two versions each)`),
    )
    enoughKeys(grown.keys, `etcd at ${gib} GiB`)
    const growSeconds = (Date.now() - started) / 1000
    note(`${nameOf(store)}: grown in ${growSeconds.toFixed(0)} s, backend ${(grown.dbBytes / GiB).toFixed(2)} GiB`)
    return { ...store, keys: grown.keys, revisions: grown.revisions, growSeconds }
  } finally {
    await system.stop()
  }
}

function start(store: Store): Promise<System> {
  return store.kind === 'kvlog' ? startKvlog([], undefined, { root: store.root }) : startEtcd(ETCD_ARGS, { root: store.root })
}

/** One round on a store: served, restarted, loaded, listed, stopped (the store stays). */
async function round(store: Store): Promise<Round> {
  const { keys } = store
  const name = nameOf(store)
  note(`${name}: open`)
  const system = await start(store)
  try {
    note(`${name}: restart`)
    const restartMs = await system.restart()
    // Gets, then puts, over the store's keys: 64 clients on 4 connections, closed loop.
    const load = { target: system.grpc, clients: 64, connections: 4, durationMs: seconds * 1000 }
    note(`${name}: gets`)
    const gets = await runLoad({ ...load, cmd: 'ranges', mode: 'point', prefix: SCALE_PREFIX, keys }, 2)
    note(`${name}: puts`)
    const puts = await runLoad({ ...load, cmd: 'puts', keyPrefix: SCALE_PREFIX, keys, keyStart: 7919, valueBytes: 1536 }, 2)
    note(`${name}: a list of ${formatNumber(listKeys)} keys`)
    const list = await measureBigList(system, listKeys, 500, 1000, LIST_PREFIX)
    return {
      restartMs,
      getP50: gets.p50,
      getP99: gets.p99,
      getsPerSec: gets.opsPerSec,
      putP50: puts.p50,
      putP99: puts.p99,
      putsPerSec: puts.opsPerSec,
      listMs: list.ms,
      listRssGrowthMb: list.rssGrowth / MB,
      listAnonGrowthMb: list.anonGrowth / MB,
    }
  } finally {
    await system.stop()
  }
}

/** The compaction and Defragment on a store, last (they remove the history the rounds read); then the store is removed. */
async function compactStore(store: Store): Promise<void> {
  note(`${nameOf(store)}: compaction`)
  const system = await start(store)
  const client = connect(system.grpc)
  try {
    const head = await put(client, '/bench/marker', Buffer.from('x'))
    store.diskBeforeCompactMb = (await system.diskBytes()) / MB
    let t0 = performance.now()
    await call(client.kv.Compact.bind(client.kv), { revision: head, physical: true } as Message)
    store.compactionMs = performance.now() - t0
    store.diskAfterCompactMb = (await system.diskBytes()) / MB
    note(`${nameOf(store)}: Defragment`)
    t0 = performance.now()
    await call(client.maintenance.Defragment.bind(client.maintenance), {})
    store.defragmentMs = performance.now() - t0
    store.diskAfterDefragmentMb = (await system.diskBytes()) / MB
    note(`${nameOf(store)}: compaction ${store.compactionMs.toFixed(0)} ms, Defragment ${store.defragmentMs.toFixed(0)} ms`)
  } finally {
    client.close()
    await system.destroy()
  }
}

type Field =
  | keyof Round
  | 'keys'
  | 'growSeconds'
  | 'compactionMs'
  | 'defragmentMs'
  | 'diskBeforeCompactMb'
  | 'diskAfterCompactMb'
  | 'diskAfterDefragmentMb'

const ROWS: Array<[string, Field, (x: number) => string]> = [
  ['keys (two versions each)', 'keys', formatNumber],
  ['grown in, s (kvlog: offline import; etcd: its API)', 'growSeconds', (x) => x.toFixed(0)],
  ['restart, ms', 'restartMs', formatNumber],
  ['get p50, ms', 'getP50', (x) => x.toFixed(2)],
  ['get p99, ms', 'getP99', (x) => x.toFixed(2)],
  ['gets/s (64 clients)', 'getsPerSec', formatNumber],
  ['put p50, ms', 'putP50', (x) => x.toFixed(2)],
  ['put p99, ms', 'putP99', (x) => x.toFixed(2)],
  ['puts/s (64 clients)', 'putsPerSec', formatNumber],
  [`list of ${formatNumber(listKeys)} keys, ms`, 'listMs', formatNumber],
  ["server's RSS growth during it, MB", 'listRssGrowthMb', (x) => x.toFixed(1)],
  ['of which anonymous memory, MB', 'listAnonGrowthMb', (x) => x.toFixed(1)],
  ['compaction to the head, ms', 'compactionMs', formatNumber],
  ['Defragment after it, ms', 'defragmentMs', formatNumber],
  ['disk before compaction, MB', 'diskBeforeCompactMb', formatNumber],
  ['disk after compaction, MB', 'diskAfterCompactMb', formatNumber],
  ['disk after Defragment, MB', 'diskAfterDefragmentMb', formatNumber],
]

/** A store's figure: the median of its rounds for what the rounds measure. */
function figure(store: Store, field: Field): number {
  if (
    field === 'keys' ||
    field === 'growSeconds' ||
    field === 'compactionMs' ||
    field === 'defragmentMs' ||
    field === 'diskBeforeCompactMb' ||
    field === 'diskAfterCompactMb' ||
    field === 'diskAfterDefragmentMb'
  ) {
    return store[field]
  }
  return median(store.rounds.map((r) => r[field]))
}

/** Each figure of `a` over the same of `b`. */
function ratios(a: Store, b: Store): Record<string, number> {
  return Object.fromEntries(ROWS.map(([, field]) => [field, figure(a, field) / figure(b, field)]))
}

async function main(): Promise<void> {
  const { gib: big, 'small-gib': small, rounds } = args
  const etcdGib = args['etcd-gib'] ?? Math.min(big, ETCD_MAX_GIB)
  const base = args.dir ?? tmpdir()
  const etcdVersion = etcdGib > 0 ? checkEtcdInstalled() : undefined
  await mkdir(base, { recursive: true })
  const stores: Store[] = []
  try {
    const s = await grow(base, small)
    stores.push(s)
    const b = await grow(base, big)
    stores.push(b)
    const e = etcdGib > 0 ? await growEtcdStore(base, etcdGib, b.keys) : undefined
    if (e !== undefined) stores.push(e)
    // The order of the stores alternates from round to round, so the machine's drift falls on all.
    for (let r = 0; r < rounds; r++) {
      for (const store of r % 2 === 0 ? stores : [...stores].reverse()) {
        const figures = await round(store)
        store.rounds.push(figures)
        note(
          `${nameOf(store)}: round ${r + 1}: restart ${figures.restartMs.toFixed(0)} ms, get p99 ${figures.getP99.toFixed(1)} ms, put p99 ${figures.putP99.toFixed(1)} ms, list ${figures.listMs.toFixed(0)} ms`,
        )
      }
    }
    for (const store of stores) await compactStore(store)
    endProgress()
    report(s, b, e, etcdVersion, rounds)
  } finally {
    await Promise.all(stores.map((store) => rm(store.root, { recursive: true, force: true })))
  }
}

function report(s: Store, b: Store, e: Store | undefined, etcdVersion: string | undefined, rounds: number): void {
  console.log(
    `kvlog bench:scale, ${new Date(T0).toISOString().slice(0, 16).replace('T', ' ')} UTC, ${seconds} s per load, medians of ${rounds} alternating rounds`,
  )
  const head = ['', `kvlog ${s.gib} GiB`, `kvlog ${b.gib} GiB`, 'big / small']
  if (e !== undefined) head.push(`etcd ${etcdVersion}`, 'big / etcd')
  const rows: Array<Array<string | number>> = [head]
  for (const [name, field, show] of ROWS) {
    const row = [name, show(figure(s, field)), show(figure(b, field)), (figure(b, field) / figure(s, field)).toFixed(2)]
    if (e !== undefined) row.push(show(figure(e, field)), (figure(b, field) / figure(e, field)).toFixed(2))
    rows.push(row)
  }
  console.log(table(rows))
  if (e !== undefined) console.log(`etcd's store: its backend let grow to ${e.gib} GiB at most`)
  if (json) {
    const plain = ({ root: _r, ...store }: Store) => store
    console.log(
      JSON.stringify({
        date: new Date(T0).toISOString(),
        seconds,
        rounds,
        listKeys,
        small: plain(s),
        big: plain(b),
        bigOverSmall: ratios(b, s),
        ...(e === undefined ? {} : { etcd: { ...plain(e), version: etcdVersion }, bigOverEtcd: ratios(b, e) }),
      }),
    )
  }
}

await runMain(main)
