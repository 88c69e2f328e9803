/** watch, history, diff: the debugging views. */
import { CompactedError } from '../../errors.js'
import type { HistoryEvent, KeyValue } from '../../codec.js'
import { bool, int, str, type Context } from '../context.js'
import { UsageError } from '../args.js'
import { display, eventJson, jsonDiff, table, text } from '../output.js'
import { isoTime, parsePoint, spanMs, startRevision, stateRevision, type Point } from '../points.js'

/** How long `watch` waits for a first answer from any endpoint before it gives up (--connect-timeout). */
export const WATCH_CONNECT_TIMEOUT = '30s'

/**
 * watch KEY [--prefix] [--rev REV|TIME | --cursor NAME] [--prev-kv]: resumes by itself (on the next
 * endpoint when there are several); COMPACTED ends it with exit code 3; no endpoint answering within
 * --connect-timeout ends it with exit code 1.
 */
export async function watch(c: Context): Promise<number> {
  const [key] = c.p.args
  const withPrev = bool(c, 'prev-kv')
  const rev = str(c, 'rev')
  const cursor = str(c, 'cursor')
  if (rev !== undefined && cursor !== undefined) throw new UsageError('give --rev or --cursor, not both')
  const connectTimeoutMs = duration(str(c, 'connect-timeout') ?? WATCH_CONNECT_TIMEOUT, '--connect-timeout')
  const start = rev === undefined ? undefined : await startRevision(c.client, parsePoint(rev, '--rev'))
  const w = c.client.watch(key, {
    prefix: bool(c, 'prefix'),
    fromKey: bool(c, 'from-key'),
    startRevision: start,
    prevKv: withPrev,
    ...(cursor !== undefined ? { cursor } : {}),
    ...(connectTimeoutMs > 0 ? { connectTimeoutMs } : {}),
  })
  const stop = () => w.close()
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  w.on('reconnect', (next: number | undefined) => process.stderr.write(`watch: reconnecting, resuming from revision ${next ?? 'now'}\n`))
  try {
    for await (const batch of w) {
      for (const e of batch.events) {
        if (c.mode === 'json') c.out(JSON.stringify(eventJson(e, e.time, withPrev)))
        else {
          const prev = withPrev ? `\t${e.prevKv ? display(e.prevKv.value) : '(none)'}` : ''
          c.out(`${e.revision}\t${e.type}\t${display(e.kv.key)}\t${e.type === 'PUT' ? display(e.kv.value) : ''}${prev}`)
        }
      }
    }
    return 0
  } catch (err) {
    if (err instanceof CompactedError) {
      process.stderr.write(
        `watch: the history needed was compacted (oldest available revision ${err.compactRevision}); ` +
          `read the current state and watch from its revision + 1\n`,
      )
      return 3
    }
    throw err
  }
}

/** A duration: 30s, 2m, 1h30m, 500ms, or a number of seconds; 0 means none. */
export function duration(text: string, flag: string): number {
  if (/^[0-9]+$/.test(text)) return Number(text) * 1000
  if (/^[0-9]+ms$/.test(text)) return Number(text.slice(0, -2))
  const ms = spanMs(text)
  if (ms === undefined) throw new UsageError(`${flag}: expected a duration such as 30s, 2m or 1h, got ${JSON.stringify(text)}`)
  return ms
}

/** A --from/--to value: a revision, or a time (ISO 8601 or ago). */
function bound(value: string | undefined, flag: string): Bound {
  if (value === undefined) return {}
  const p: Point = parsePoint(value, `--${flag}`)
  return 'rev' in p ? { rev: p.rev } : { time: isoTime(p) }
}

type Bound = { rev?: number; time?: string }
type KeyFlags = { prefix: boolean; fromKey: boolean }

/**
 * history KEY [--prefix] [--from REV|TIME] [--to REV|TIME] [--limit N [--newest]]: every change, with
 * JSON diffs, oldest first. --limit N gives the first N; with --newest, the last N (still oldest first).
 */
export async function history(c: Context): Promise<number> {
  const [key] = c.p.args
  const from = bound(str(c, 'from'), 'from')
  const to = bound(str(c, 'to'), 'to')
  const limit = int(c, 'limit')
  if (limit === 0) throw new UsageError('--limit: expected at least 1')
  const newest = bool(c, 'newest')
  if (newest && limit === undefined) throw new UsageError('--newest needs --limit N')
  const keys = { prefix: bool(c, 'prefix'), fromKey: bool(c, 'from-key') }
  const events = newest ? await newestEvents(c, key, keys, from, to, limit!) : await readHistory(c, key, keys, from, to, limit ?? Infinity)
  const rows: string[][] = [['REVISION', 'TIME', 'WHO', 'TYPE', 'KEY', 'VALUE / CHANGE']]
  for (const e of events) {
    if (c.mode === 'json') c.out(JSON.stringify(eventJson(e, e.time, true)))
    else rows.push([String(e.revision), e.time, who(e), e.type, display(e.kv.key), change(e)])
  }
  if (c.mode === 'table') c.out(table(rows))
  return 0
}

/** The first `limit` events of the range between the bounds, page by page. */
async function readHistory(c: Context, key: string, keys: KeyFlags, from: Bound, to: Bound, limit: number): Promise<HistoryEvent[]> {
  const out: HistoryEvent[] = []
  let next = from.rev
  while (out.length < limit) {
    const page = await c.client.history(key, {
      ...keys,
      prevKv: true,
      limit: Math.min(1000, limit - out.length),
      from: next,
      to: to.rev,
      ...(next === undefined && from.time ? { fromTime: from.time } : {}),
      ...(to.time ? { toTime: to.time } : {}),
    })
    // A page never splits a revision, so it may hold more events than asked for: cut at the limit.
    out.push(...page.events.slice(0, limit - out.length))
    if (!page.more) break
    next = page.nextRevision
  }
  return out
}

/**
 * The last `n` events between the bounds: read windows of revisions ending at the upper bound, each
 * four times wider than the last, until one holds n events or reaches the lower bound. Times are first
 * turned into revisions, so every window has the same end.
 */
async function newestEvents(c: Context, key: string, keys: KeyFlags, from: Bound, to: Bound, n: number): Promise<HistoryEvent[]> {
  const head = await c.client.history(key, { ...keys, limit: 1 })
  const upper = to.rev ?? (to.time ? await c.client.revisionAt(to.time) : head.revision)
  const first = from.rev ?? (from.time ? await startRevision(c.client, parsePoint(from.time, '--from')) : 1)
  const lower = Math.max(first, head.compactRevision + 1)
  for (let width = n; ; width *= 4) {
    const start = Math.max(lower, upper - width + 1)
    if (start > upper) return []
    const events = await readHistory(c, key, keys, { rev: start }, { rev: upper }, Infinity)
    if (events.length >= n || start === lower) return events.slice(-n)
  }
}

/** `user@door`; anonymous when auth is off; `-` for writes the store made itself (lease expiry). */
function who(e: HistoryEvent): string {
  return e.author === undefined ? '-' : `${e.author.user ?? 'anonymous'}@${e.author.door}`
}

function change(e: HistoryEvent): string {
  if (e.type === 'DELETE') return e.prevKv ? `(deleted; was ${display(e.prevKv.value)})` : '(deleted)'
  if (e.prevKv === undefined) return display(e.kv.value)
  const diff = jsonDiff(e.prevKv.value, e.kv.value)
  return diff === undefined ? display(e.kv.value) : diff.length === 0 ? '(no change)' : diff.join('; ')
}

/** diff --from REV|TIME [--to REV|TIME|now] [KEY --prefix]: what changed between two states (--to: now by default). */
export async function diff(c: Context): Promise<number> {
  const fromText = str(c, 'from')
  const toText = str(c, 'to') ?? 'now'
  if (fromText === undefined) throw new UsageError('diff needs --from REV|TIME (and --to REV|TIME, default now)')
  const from = await stateRevision(c.client, parsePoint(fromText, '--from'))
  const to =
    toText === 'now'
      ? (await c.client.history('\0', { fromKey: true, limit: 1 })).revision
      : await stateRevision(c.client, parsePoint(toText, '--to'))
  const [key = '\0'] = c.p.args
  const range = c.p.args.length === 0 ? { fromKey: true } : { prefix: bool(c, 'prefix') }
  const [before, after] = await Promise.all([snapshot(c, key, range, from), snapshot(c, key, range, to)])
  const changes: Array<{ key: Buffer; change: 'added' | 'removed' | 'modified'; before?: KeyValue; after?: KeyValue }> = []
  for (const [id, kv] of after) {
    const old = before.get(id)
    if (old === undefined) changes.push({ key: kv.key, change: 'added', after: kv })
    else if (old.modRevision !== kv.modRevision) changes.push({ key: kv.key, change: 'modified', before: old, after: kv })
  }
  for (const [id, kv] of before) if (!after.has(id)) changes.push({ key: kv.key, change: 'removed', before: kv })
  changes.sort((a, b) => Buffer.compare(a.key, b.key))
  if (c.mode === 'json') {
    for (const x of changes) {
      c.out(
        JSON.stringify({
          change: x.change,
          ...keyField(x.key),
          ...(x.before ? { before: { ...valueField(x.before.value), modRevision: x.before.modRevision } } : {}),
          ...(x.after ? { after: { ...valueField(x.after.value), modRevision: x.after.modRevision } } : {}),
        }),
      )
    }
    return 0
  }
  c.out(table([['CHANGE', 'KEY', 'DETAIL'], ...changes.map((x) => [x.change, display(x.key), detail(x.before, x.after)])]))
  return 0
}

function keyField(key: Buffer): Record<string, string> {
  const t = text(key)
  return t === undefined ? { keyBase64: key.toString('base64') } : { key: t }
}

function valueField(value: Buffer): Record<string, string> {
  const t = text(value)
  return t === undefined ? { valueBase64: value.toString('base64') } : { value: t }
}

function detail(before: KeyValue | undefined, after: KeyValue | undefined): string {
  if (before && after) {
    const d = jsonDiff(before.value, after.value)
    return d === undefined ? `${display(before.value)} → ${display(after.value)}` : d.join('; ')
  }
  return display((after ?? before)!.value)
}

async function snapshot(
  c: Context,
  key: string,
  range: { prefix?: boolean; fromKey?: boolean },
  revision: number,
): Promise<Map<string, KeyValue>> {
  const out = new Map<string, KeyValue>()
  for await (const page of c.client.list(key, { ...range, revision, pageSize: 1000 })) {
    for (const kv of page.kvs) out.set(kv.key.toString('latin1'), kv)
  }
  return out
}
