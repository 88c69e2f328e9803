/**
 * npm run bench:scale [-- --gib G] [--small-gib G] [--seconds S] [--rounds N] [--dir DIR] [-o json | --json]
 *
 * kvlog on a big store beside a small one, the same workloads on each: is it as fast at G GiB (default 20,
 * ten times etcd's default 2 GiB quota) as at --small-gib (default 1)? Each store is grown offline through
 * the import path (grow.ts: every key of 1–2 KiB written twice, so it has history), under DIR (default the
 * system's temporary directory), then served by a real `kvlog serve` (--fsync always), one store at a time,
 * in `--rounds` rounds (3) that alternate which store goes first (as bench:compare's rounds do); each
 * figure is the median of its rounds:
 *
 *   restart      ms from spawn until a gRPC Range answers, after a first open (SIGTERM, start again)
 *   get, put     p50 and p99 of gRPC point gets (64 clients) and of 1.5 KiB puts over the same keys (64
 *                clients), closed loop for S seconds each (default 10), through bench:compare's generators
 *   list         a paged list of 100,000 keys (bench:compare's big list: pages of 500 at one revision), and
 *                the server's RSS growth during it
 *   compaction   Compact(head, physical) time, and the store's bytes on disk before and after (once, after
 *                the rounds)
 *
 * Prints each figure for both stores and big / small; `-o json` (or --json) ends with one JSON line. The
 * stores are removed at the end. Progress goes to the terminal.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Message } from '../../apiserver/etcd/proto.js'
import { call, connect, put } from '../compare/grpc.js'
import { runLoad, runMain } from '../compare/generators.js'
import { startKvlog, type System } from '../compare/systems.js'
import { median } from '../compare/figures.js'
import { measureBigList } from '../compare/workloads/big-list.js'
import { endProgress, formatNumber, numberFlag, parseBenchArgs, progress, table } from '../lib/report.js'
import { growStore, keysFor, SCALE_PREFIX } from './grow.js'

const GiB = 1024 ** 3
const MB = 1e6
/** The list: every key under SCALE_PREFIX + '000', keys 0 to 99,999 (8-digit names). */
const LIST_KEYS = 100_000
const LIST_PREFIX = `${SCALE_PREFIX}000`

const argv = process.argv.slice(2)
const o = argv.indexOf('-o')
if (o >= 0) argv.splice(o, 2, argv[o + 1] === 'json' ? '--json' : `--output=${argv[o + 1]}`)
const args = parseBenchArgs(argv)
const seconds = numberFlag(args, 'seconds', 10)

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

interface Store {
  gib: number
  root: string
  keys: number
  revisions: number
  growSeconds: number
  rounds: Round[]
  compactionMs: number
  diskBeforeCompactMb: number
  diskAfterCompactMb: number
}

const T0 = Date.now()
const note = (text: string) => {
  progress(text)
  if (!process.stderr.isTTY) process.stderr.write(`${((Date.now() - T0) / 1000).toFixed(0)}s ${text}\n`)
}

async function grow(base: string, gib: number): Promise<Store> {
  const keys = keysFor(gib * GiB)
  if (keys < LIST_KEYS) {
    const least = Math.ceil((10 * LIST_KEYS) / keysFor(GiB)) / 10
    throw new Error(`a ${gib} GiB store holds ${keys} keys, fewer than the list's ${LIST_KEYS}: give at least ${least} GiB`)
  }
  const root = await mkdtemp(join(base, 'bench-scale-'))
  const started = Date.now()
  const grown = await growStore(join(root, 'data'), keys, (done, total) =>
    note(`${gib} GiB: grown ${formatNumber(done)} of ${formatNumber(total)} revisions`),
  )
  const growSeconds = (Date.now() - started) / 1000
  return {
    gib,
    root,
    keys,
    revisions: grown.revisions,
    growSeconds,
    rounds: [],
    compactionMs: NaN,
    diskBeforeCompactMb: NaN,
    diskAfterCompactMb: NaN,
  }
}

/** One round on a store: served, restarted, loaded, listed, stopped (the store stays). */
async function round(store: Store): Promise<Round> {
  const { gib, keys } = store
  note(`${gib} GiB: open`)
  const system = await startKvlog([], undefined, { root: store.root })
  try {
    note(`${gib} GiB: restart`)
    const restartMs = await system.restart()
    // Gets, then puts, over the store's keys: 64 clients on 4 connections, closed loop.
    const load = { target: system.grpc, clients: 64, connections: 4, durationMs: seconds * 1000 }
    note(`${gib} GiB: gets`)
    const gets = await runLoad({ ...load, cmd: 'ranges', mode: 'point', prefix: SCALE_PREFIX, keys }, 2)
    note(`${gib} GiB: puts`)
    const puts = await runLoad({ ...load, cmd: 'puts', keyPrefix: SCALE_PREFIX, keys, keyStart: 7919, valueBytes: 1536 }, 2)
    note(`${gib} GiB: a list of ${LIST_KEYS} keys`)
    const list = await measureBigList(system, LIST_KEYS, 500, 1000, LIST_PREFIX)
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

/** The compaction on a store, last (it removes the history the rounds read); then the store is removed. */
async function compactStore(store: Store): Promise<void> {
  note(`${store.gib} GiB: compaction`)
  const system = await startKvlog([], undefined, { root: store.root })
  try {
    const { compactionMs, diskBefore } = await compact(system)
    store.compactionMs = compactionMs
    store.diskBeforeCompactMb = diskBefore / MB
    store.diskAfterCompactMb = (await system.diskBytes()) / MB
  } finally {
    await system.destroy()
  }
}

/** Compact(head, physical=true): how long until it returns, and the disk bytes before it. */
async function compact(system: System): Promise<{ compactionMs: number; diskBefore: number }> {
  const client = connect(system.grpc)
  try {
    const head = await put(client, '/bench/marker', Buffer.from('x'))
    const diskBefore = await system.diskBytes()
    const t0 = performance.now()
    await call(client.kv.Compact.bind(client.kv), { revision: head, physical: true } as Message)
    return { compactionMs: performance.now() - t0, diskBefore }
  } finally {
    client.close()
  }
}

type Field = keyof Round | 'keys' | 'growSeconds' | 'compactionMs' | 'diskBeforeCompactMb' | 'diskAfterCompactMb'

const ROWS: Array<[string, Field, (x: number) => string]> = [
  ['keys (two versions each)', 'keys', formatNumber],
  ['grown in (offline import), s', 'growSeconds', (x) => x.toFixed(0)],
  ['restart, ms', 'restartMs', formatNumber],
  ['get p50, ms', 'getP50', (x) => x.toFixed(2)],
  ['get p99, ms', 'getP99', (x) => x.toFixed(2)],
  ['gets/s (64 clients)', 'getsPerSec', formatNumber],
  ['put p50, ms', 'putP50', (x) => x.toFixed(2)],
  ['put p99, ms', 'putP99', (x) => x.toFixed(2)],
  ['puts/s (64 clients)', 'putsPerSec', formatNumber],
  [`list of ${formatNumber(LIST_KEYS)} keys, ms`, 'listMs', formatNumber],
  ["server's RSS growth during it, MB", 'listRssGrowthMb', (x) => x.toFixed(1)],
  ['of which anonymous memory, MB', 'listAnonGrowthMb', (x) => x.toFixed(1)],
  ['compaction to the head, ms', 'compactionMs', formatNumber],
  ['disk before compaction, MB', 'diskBeforeCompactMb', formatNumber],
  ['disk after compaction, MB', 'diskAfterCompactMb', formatNumber],
]

/** A store's figure: the median of its rounds for what the rounds measure. */
function figure(store: Store, field: Field): number {
  if (
    field === 'keys' ||
    field === 'growSeconds' ||
    field === 'compactionMs' ||
    field === 'diskBeforeCompactMb' ||
    field === 'diskAfterCompactMb'
  ) {
    return store[field]
  }
  return median(store.rounds.map((r) => r[field]))
}

async function main(): Promise<void> {
  const big = numberFlag(args, 'gib', 20)
  const small = numberFlag(args, 'small-gib', 1)
  const rounds = numberFlag(args, 'rounds', 3)
  const base = args.flags.get('dir') ?? tmpdir()
  await mkdir(base, { recursive: true })
  const s = await grow(base, small)
  const b = await grow(base, big)
  try {
    // Which store goes first alternates from round to round, so the machine's drift falls on both.
    for (let r = 0; r < rounds; r++) {
      for (const store of r % 2 === 0 ? [s, b] : [b, s]) store.rounds.push(await round(store))
    }
    await compactStore(s)
    await compactStore(b)
  } finally {
    await Promise.all([s, b].map((store) => rm(store.root, { recursive: true, force: true })))
  }
  endProgress()
  console.log(
    `kvlog bench:scale, ${new Date(T0).toISOString().slice(0, 16).replace('T', ' ')} UTC, ${seconds} s per load, medians of ${rounds} alternating rounds`,
  )
  const rows: Array<Array<string | number>> = [['', `${small} GiB store`, `${big} GiB store`, 'big / small']]
  for (const [name, field, show] of ROWS) {
    rows.push([name, show(figure(s, field)), show(figure(b, field)), (figure(b, field) / figure(s, field)).toFixed(2)])
  }
  console.log(table(rows))
  if (args.json) {
    const { root: _s, ...small } = s
    const { root: _b, ...big } = b
    console.log(JSON.stringify({ date: new Date(T0).toISOString(), seconds, rounds, small, big }))
  }
}

await runMain(main)
