/**
 * Lists: one consistent snapshot of a collection, with kube-apiserver's resourceVersion semantics,
 * paging and selectors.
 *
 * resourceVersion   resourceVersionMatch   reads
 *   unset / ""       (none)                 the latest revision
 *   "0"              (none) / NotOlderThan  the latest revision (any revision would do; the latest is cheap)
 *   "N"              (none) / NotOlderThan  the latest revision; N above it is FUTURE_REVISION
 *   "N"              Exact                  revision N; below the compact revision 410 Expired
 *
 * Paging: `limit` items per page; `continue` (apiserver/paging.ts) holds the list's revision and the next
 * key, so every page reads the same snapshot; a token whose revision was compacted is 410 Expired.
 * Selectors filter while reading: a page reads on until it has `limit` matching items or the end.
 */
import type { Log } from '../../log/backend.js'
import { prefixEnd } from '../../log/keys.js'
import { KvlogError } from '../../log/errors.js'
import type { KeyValue } from '../../log/types.js'
import { decodeContinue, encodeContinue } from '../paging.js'
import { rangeSteps, type RangeStep } from '../range-steps.js'
import { queryInt, queryString, type Query } from '../params.js'
import { decodeStored, type Target } from './objects.js'
import { type K8sObject } from './k8s-object.js'
import { collectionPrefix } from './paths.js'
import type { ResourceType } from './registry.js'
import { kindRules } from './strategy.js'
import { both, parseFieldSelector, parseLabelSelector, type Selector } from './selectors.js'
import { badRequest, invalidOptions } from './status.js'

export interface ListOptions {
  /** The revision to read at (undefined = latest). */
  revision?: number
  /** The least revision acceptable (NotOlderThan); checked against the store's revision. */
  notOlderThan?: number
  limit?: number
  continue?: string
  /** Read from this key of the collection on (a walk's next page, at `revision` or the latest); not with continue. */
  from?: Buffer
  selector: Selector
}

export interface ListResult {
  items: K8sObject[]
  revision: number
  continue?: string
  remainingItemCount?: number
}

/** A resourceVersion parameter: undefined for unset/"", else the revision (0 for "0"). */
export function parseResourceVersion(q: Query): number | undefined {
  const rv = queryString(q, 'resourceVersion')
  if (rv === undefined || rv === '') return undefined
  if (!/^[0-9]{1,16}$/.test(rv)) throw badRequest(`invalid resource version: ${JSON.stringify(rv)}`)
  return Number(rv)
}

export function parseSelectors(q: Query, rt: ResourceType): Selector {
  const fields = kindRules(rt).fieldSelectors
  return both(parseLabelSelector(queryString(q, 'labelSelector')), parseFieldSelector(queryString(q, 'fieldSelector'), fields))
}

export function parseListOptions(q: Query, rt: ResourceType): ListOptions {
  const rv = parseResourceVersion(q)
  const match = queryString(q, 'resourceVersionMatch')
  const token = queryString(q, 'continue')
  const limit = queryInt(q, 'limit')
  const selector = parseSelectors(q, rt)
  if (match !== undefined && match !== '' && match !== 'NotOlderThan' && match !== 'Exact') {
    throw invalidOptions('resourceVersionMatch', `Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan"`)
  }
  if (match && rv === undefined)
    throw invalidOptions('resourceVersionMatch', 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided')
  if (match && token) throw invalidOptions('resourceVersionMatch', 'Forbidden: resourceVersionMatch is forbidden when continue is provided')
  if (match === 'Exact' && rv === 0)
    throw invalidOptions('resourceVersionMatch', 'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
  if (token && rv !== undefined && rv !== 0)
    throw invalidOptions('resourceVersion', 'Forbidden: specifying resource version is not allowed when using continue')
  const base = { selector, ...(limit ? { limit } : {}), ...(token ? { continue: token } : {}) }
  if (rv === undefined || rv === 0) return base
  return match === 'Exact' ? { ...base, revision: rv } : { ...base, notOlderThan: rv }
}

/** Reads this many keys per range when scanning a whole collection. */
const SCAN_PAGE = 500

/**
 * Visits every kv under `prefix` at one revision (the latest when the scan starts), a page at a time;
 * returns that revision. `stop()` returning true ends the scan early.
 */
export async function scanPrefix(
  log: Pick<Log, 'range'>,
  prefix: string,
  visit: (kv: KeyValue) => void,
  stop: () => boolean = () => false,
): Promise<number> {
  const end = prefixEnd(Buffer.from(prefix))
  let start: Buffer = Buffer.from(prefix)
  let revision: number | undefined
  for (;;) {
    const page = await log.range(start, { rangeEnd: end, limit: SCAN_PAGE, revision })
    revision = page.revision
    for (const kv of page.kvs) visit(kv)
    if (!page.more || stop()) return revision
    start = Buffer.concat([page.kvs.at(-1)!.key, Buffer.from([0])])
  }
}

export async function listObjects(log: Log, target: Target, options: ListOptions, chunkBytes: number): Promise<ListResult> {
  const items: K8sObject[] = []
  const steps = listSteps(log, target, options, chunkBytes, (obj) => void items.push(obj))
  for (;;) {
    const step = await steps.next()
    if (step.done === true) return { items, ...step.value }
  }
}

/** What a list answers beside its items. */
export type ListMeta = Omit<ListResult, 'items'>

/**
 * A list read in steps (range-steps.ts): hands each matching object to `item` as it is read and yields
 * the list's revision after each step; returns the list's metadata. The checks (continue token, compacted,
 * notOlderThan) are made before the first step.
 */
export async function* listSteps(
  log: Log,
  target: Target,
  options: ListOptions,
  chunkBytes: number,
  item: (obj: K8sObject) => void,
): AsyncGenerator<number, ListMeta, undefined> {
  const prefix = Buffer.from(collectionPrefix(target.rt, target.namespace))
  const end = prefixEnd(prefix)
  let start: Buffer = options.from ?? prefix
  let revision = options.revision
  if (options.continue !== undefined) {
    const token = decodeContinue(options.continue, prefix, end)
    if (token.revision < log.compactRevision) {
      throw new KvlogError(
        'COMPACTED',
        'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
        {
          compactRevision: log.compactRevision,
        },
      )
    }
    ;[start, revision] = [token.start, token.revision]
  }
  if (options.notOlderThan !== undefined && options.notOlderThan > log.revision) {
    throw new KvlogError('FUTURE_REVISION', `Too large resource version: ${options.notOlderThan}, current: ${log.revision}`, {
      currentRevision: log.revision,
      requestedRevision: options.notOlderThan,
    })
  }
  const limit = options.limit ?? 0
  let matched = 0
  // Whether a key follows the last item of a full page.
  let more = false
  const steps = rangeSteps(
    log,
    start,
    { rangeEnd: end, revision },
    chunkBytes,
    (key, value, createRevision, modRevision, version, lease) => {
      if (limit > 0 && matched === limit) {
        more = true
        return false
      }
      const obj = decodeStored({ key, value, createRevision, modRevision, version, lease }, target)
      if (obj !== undefined && options.selector.matches(obj)) {
        matched++
        item(obj)
      }
      return true
    },
  )
  let last: RangeStep | undefined
  for await (const step of steps) {
    last = step
    yield step.revision
  }
  const { revision: read, count, taken } = last!
  if (!more) return { revision: read }
  // count counts the keys from the list's start on; without selectors the keys after the page are its items.
  return {
    revision: read,
    continue: encodeContinue(read, last!.lastKey(), prefix, end),
    ...(options.selector.empty ? { remainingItemCount: count - taken } : {}),
  }
}
