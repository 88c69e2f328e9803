/**
 * `kvlog import --from-etcd ENDPOINTS --data-dir DIR` (main.ts): makes a kvlog store from a running etcd
 * with etcd's revisions, so clients see the same revisions (resourceVersions) before and after a move.
 *
 *   floor F     etcd's compact revision (etcd-source.ts); the store is compacted at F too
 *   base state  a consistent Range of every key at max(F, 1), paged; its first page's header revision is
 *               the head H the import copies up to
 *   history     a watch with prevKv from F + 1 to H, one log entry per revision, gapless
 *   leases      ids, granted TTLs and remaining TTLs (a deadline of now + remaining), read last
 *
 * The store is built in a new directory beside DIR (same parent, so the final rename is atomic) and
 * renamed to DIR only once it is complete and synced; any failure removes it, so DIR is either absent or
 * empty, or holds the whole store. DIR must be missing or empty. An import that was killed leaves its work
 * directory behind; the next import of DIR removes it and starts over (it says so). If the source compacts
 * past a revision the import still needs, the import starts over from the new floor (up to `maxRestarts`
 * times) and says so.
 *
 * Not carried over: commit timestamps (etcd keeps none: each imported revision is stamped with the time it
 * was imported), and writes the source takes after H.
 */
import { resolve } from 'node:path'
import { KvlogError, type LogOptions } from '../../log/index.js'
import { StoreImport, type ImportedWrite } from '../../log/level/import.js'
import { OP_DELETE, OP_PUT, type LoggedOp } from '../../log/ops.js'
import { EtcdSource, type SourceAccess, type SourceEvent } from './etcd-source.js'
import { buildInPlace, checkTarget, removeInterrupted } from '../fresh-dir.js'

/** Progress of the history copy, in revisions (main.ts gets the drawing from bin/kvlog). */
export interface RevisionProgress {
  update(revisions: number): void
  done(): void
}

export interface EtcdImportOptions {
  /** TLS and auth towards the source (etcdctl's --cacert, --cert, --key, --user). */
  access?: SourceAccess
  /** A progress display for `total` revisions of history. */
  progress?: (total: number) => RevisionProgress
  /** Called (and awaited) after each page of the base state with the keys copied so far. */
  baseProgress?: (keys: number) => void | Promise<void>
  /** Keys per Range page of the base state (default 1000). */
  rangePageSize?: number
  /** Notes for the operator (e.g. a restart after the source compacted). */
  note?: (line: string) => void
  /** Starts over at most this many times when the source compacts during the import (default 3). */
  maxRestarts?: number
  /** Segment and LevelDB settings of the new store (the config's, by default its defaults). */
  settings?: Partial<Omit<LogOptions, 'dir'>>
}

export interface EtcdImportResult {
  endpoint: string
  dataDir: string
  /** The store's revision: the source's at the time of the base read. */
  revision: number
  compactRevision: number
  keys: number
  /** Log entries copied from the history (F + 1 .. revision). */
  revisions: number
  leases: number
  restarts: number
}

const EMPTY = Buffer.alloc(0)

export async function importFromEtcd(endpoints: string, dir: string, o: EtcdImportOptions = {}): Promise<EtcdImportResult> {
  const target = resolve(dir)
  await checkTarget(target)
  await removeInterrupted(target, o.note)
  const source = await EtcdSource.connect(endpoints, o.access)
  const maxRestarts = o.maxRestarts ?? 3
  try {
    for (let restarts = 0; ; restarts++) {
      try {
        const copied = await buildInPlace(target, (work) => copy(source, work, o))
        return { endpoint: source.endpoint, dataDir: target, ...copied, restarts }
      } catch (err) {
        if (err instanceof KvlogError && err.code === 'COMPACTED' && restarts < maxRestarts) {
          o.note?.(`the source compacted during the import (${err.message}); starting over from its new floor`)
          continue
        }
        throw err
      }
    }
  } finally {
    source.close()
  }
}

async function copy(
  source: EtcdSource,
  work: string,
  o: EtcdImportOptions,
): Promise<Omit<EtcdImportResult, 'endpoint' | 'dataDir' | 'restarts'>> {
  const floor = await source.floor()
  const store = await StoreImport.create(work, { floor, timestamp: Date.now(), ...(o.settings ? { settings: o.settings } : {}) })
  try {
    const base = store.revision
    let head = 0
    let keys = 0
    if (base > 1) {
      for await (const page of source.rangeAt(base, o.rangePageSize)) {
        if (head === 0) head = page.head
        await store.addBase(page.kvs)
        keys += page.kvs.length
        await o.baseProgress?.(keys)
      }
    } else {
      head = await source.revision()
    }
    const bar = o.progress?.(head - base)
    if (head > base) {
      for await (const { revision, events } of source.history(base + 1)) {
        await store.append(revision, Date.now(), events.map(toWrite))
        bar?.update(revision - base)
        if (revision >= head) break
      }
    }
    bar?.done()
    const leases = await source.leases()
    const now = Date.now()
    await store.finish(leases.map((l) => ({ id: l.id, ttl: l.grantedTtl, deadline: now + l.ttl * 1000 })))
    return { revision: Math.max(head, base), compactRevision: floor, keys, revisions: Math.max(0, head - base), leases: leases.length }
  } catch (err) {
    await store.abandon()
    throw err
  }
}

/**
 * An event (etcd's watch event, or an entry's event from a kvlog history) as the op kvlog logs: prevRevision
 * is the replaced version's modRevision (prevKv).
 */
export function toWrite(e: SourceEvent): ImportedWrite {
  const { kv, prevKv } = e
  if (prevKv === undefined && (e.type === 'DELETE' || kv.version > 1)) {
    throw new KvlogError('INTERNAL', `no prevKv for ${e.type} ${JSON.stringify(kv.key.toString('latin1'))} at revision ${kv.modRevision}`)
  }
  const prevRevision = prevKv?.modRevision ?? 0
  const op: LoggedOp =
    e.type === 'PUT'
      ? {
          kind: OP_PUT,
          key: kv.key,
          value: kv.value,
          createRevision: kv.createRevision,
          version: kv.version,
          lease: kv.lease,
          prevRevision,
        }
      : { kind: OP_DELETE, key: kv.key, value: EMPTY, createRevision: 0, version: 0, lease: 0n, prevRevision }
  return prevKv === undefined ? { op } : { op, prevKv }
}
