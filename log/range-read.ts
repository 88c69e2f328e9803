/**
 * etcd's Range over any StateView: limit + `more`, `count` (keys in range, ignoring limit and filters, as
 * etcd counts), keys-only, count-only, sort, and min/max mod/create revision filters.
 *
 * Key-ordered reads without filters stop after limit+1 kvs; sorting by another target or filtering reads
 * the whole range first, as etcd does.
 */
import type { Bounds } from './keys.js'
import type { PageCounts } from './page-counts.js'
import type { StateView } from './state-view.js'
import type { KeyValue, KvSink, RangeResult, RangeSummary, SortOrder, SortTarget } from './types.js'
import type { NRangeOptions } from './validate.js'

export async function rangeRead(
  view: StateView,
  bounds: Bounds,
  o: NRangeOptions,
  revision: number,
  counts?: PageCounts,
): Promise<RangeResult> {
  if (bounds.single) {
    const kv = await view.get(bounds.start)
    const kvs = kv === undefined || o.countOnly ? [] : [o.keysOnly ? { ...kv, value: Buffer.alloc(0) } : kv]
    const filtered = kvs.filter((x) => passes(x, o))
    return { kvs: filtered, more: false, count: kv === undefined ? 0 : 1, revision }
  }
  if (o.countOnly) return { kvs: [], more: false, count: await view.count(bounds), revision }

  const order = effectiveOrder(o.sortOrder, o.sortTarget)
  const filtering = hasFilters(o)
  if (!filtering && (order === 'NONE' || o.sortTarget === 'KEY')) {
    const kvs = await view.scan(bounds, {
      limit: o.limit > 0 ? o.limit + 1 : 0,
      reverse: order === 'DESCEND',
      keysOnly: o.keysOnly,
    })
    if (o.limit > 0 && kvs.length > o.limit) {
      kvs.length = o.limit
      const count = await countOfPaged(view, bounds, order, revision, counts, kvs[o.limit - 1].key, o.limit)
      return { kvs, more: true, count, revision }
    }
    return { kvs, more: false, count: kvs.length, revision }
  }

  let kvs = await view.scan(bounds, { keysOnly: o.keysOnly && o.sortTarget !== 'VALUE' })
  const count = kvs.length
  if (filtering) kvs = kvs.filter((kv) => passes(kv, o))
  if (order !== 'NONE') sortKvs(kvs, o.sortTarget, order)
  let more = false
  if (o.limit > 0 && kvs.length > o.limit) {
    kvs.length = o.limit
    more = true
  }
  if (o.keysOnly) for (const kv of kvs) kv.value = Buffer.alloc(0)
  return { kvs, more, count, revision }
}

/**
 * rangeRead with the kvs handed to `sink`. A key-ordered read without filters goes through the view's
 * scanInto when it has one: no KeyValue objects, and a page costs its limit + 1 records (plus the count of
 * the range when there is more, as etcd reports it). Anything else is read by rangeRead, then handed over.
 */
export async function rangeReadInto(
  view: StateView,
  bounds: Bounds,
  o: NRangeOptions,
  revision: number,
  sink: KvSink,
  counts?: PageCounts,
): Promise<RangeSummary> {
  const order = effectiveOrder(o.sortOrder, o.sortTarget)
  const direct = !bounds.single && !o.countOnly && !hasFilters(o) && (order === 'NONE' || o.sortTarget === 'KEY')
  if (!direct || view.scanInto === undefined) {
    const { kvs, ...summary } = await rangeRead(view, bounds, o, revision, counts)
    for (const kv of kvs) sink(kv.key, kv.value, kv.createRevision, kv.modRevision, kv.version, kv.lease)
    return summary
  }
  let n = 0
  let more = false
  /** The last key handed over, once the page is full (a copy: the sink's key is valid during its call). */
  let last = EMPTY
  // One record past the limit says whether there is more; it is not handed over.
  await view.scanInto(bounds, { limit: o.limit > 0 ? o.limit + 1 : 0, reverse: order === 'DESCEND', keysOnly: o.keysOnly }, (...kv) => {
    if (n === o.limit && o.limit > 0) more = true
    else {
      if (++n === o.limit) last = Buffer.from(kv[0])
      sink(...kv)
    }
  })
  return { more, count: more ? await countOfPaged(view, bounds, order, revision, counts, last, n) : n, revision }
}

const EMPTY = Buffer.alloc(0)

/**
 * The count of a range read a page of (`returned` keys up to `lastKey`): what the page before it left in
 * `counts`, or counted; and, for an ascending page, what is left after it for the next (page-counts.ts).
 */
async function countOfPaged(
  view: StateView,
  bounds: Bounds,
  order: SortOrder,
  revision: number,
  counts: PageCounts | undefined,
  lastKey: Buffer,
  returned: number,
): Promise<number> {
  const count = counts?.get(revision, bounds) ?? (await view.count(bounds))
  if (order !== 'DESCEND') counts?.afterPage(revision, bounds, lastKey, count, returned)
  return count
}

/** etcd sorts ascending when a target other than KEY is given without an order. */
function effectiveOrder(order: SortOrder, target: SortTarget): SortOrder {
  return order === 'NONE' && target !== 'KEY' ? 'ASCEND' : order
}

function hasFilters(o: NRangeOptions): boolean {
  return o.minModRevision > 0 || o.maxModRevision > 0 || o.minCreateRevision > 0 || o.maxCreateRevision > 0
}

function passes(kv: KeyValue, o: NRangeOptions): boolean {
  if (o.minModRevision > 0 && kv.modRevision < o.minModRevision) return false
  if (o.maxModRevision > 0 && kv.modRevision > o.maxModRevision) return false
  if (o.minCreateRevision > 0 && kv.createRevision < o.minCreateRevision) return false
  if (o.maxCreateRevision > 0 && kv.createRevision > o.maxCreateRevision) return false
  return true
}

/** Sorts in place; ties keep key order (etcd's sort is unstable, so any tie order is etcd-compatible). */
function sortKvs(kvs: KeyValue[], target: SortTarget, order: SortOrder): void {
  const sign = order === 'DESCEND' ? -1 : 1
  const by = comparator(target)
  kvs.sort((a, b) => sign * by(a, b) || Buffer.compare(a.key, b.key))
}

function comparator(target: SortTarget): (a: KeyValue, b: KeyValue) => number {
  switch (target) {
    case 'KEY':
      return (a, b) => Buffer.compare(a.key, b.key)
    case 'VERSION':
      return (a, b) => a.version - b.version
    case 'CREATE':
      return (a, b) => a.createRevision - b.createRevision
    case 'MOD':
      return (a, b) => a.modRevision - b.modRevision
    case 'VALUE':
      return (a, b) => Buffer.compare(a.value, b.value)
  }
}
