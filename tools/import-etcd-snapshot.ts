/**
 * `kvlog import --from-etcd-snapshot FILE --data-dir DIR` (main.ts): a kvlog store from an etcd snapshot
 * (what `etcdctl snapshot save` writes, or an etcd member's member/snap/db), offline, with etcd's revisions.
 *
 *   trailer      a file of whole 512-byte blocks plus 32 bytes ends with the sha256 of the rest (as etcd
 *                streams it); it must match. A file without it is read as a bare database.
 *   floor F      meta's finishedCompactRev (or scheduledCompactRev if higher: etcd would finish that
 *                compaction when it starts); the store is compacted at F
 *   base state   the "key" bucket's entries at or below max(F, 1), replayed in revision order (puts and
 *                tombstones), is the state at the floor
 *   history      every revision above it, one log entry each with its events in sub-revision order, prevKv
 *                from the replayed state; revisions must be gapless
 *   leases       the "lease" bucket: ids and granted TTLs; the deadline is now + the remaining TTL if the
 *                file records one, else now + the TTL (as etcd does when it restores leases)
 *
 * Like the import from a running etcd (apiserver/etcd-follow/import-etcd.ts), the store is built beside DIR and renamed into
 * place only when complete; a bad file gives INVALID_ARGUMENT with details.field 'snapshot' and a reason
 * (bbolt-read.ts) and leaves nothing behind.
 */
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { LogOptions } from '../log/index.js'
import { StoreImport, type ImportedWrite } from '../log/level/import.js'
import type { KeyValue } from '../log/types.js'
import { toWrite, type EtcdImportResult, type RevisionProgress } from '../apiserver/etcd-follow/import-etcd.js'
import { buildInPlace, checkTarget, removeInterrupted } from '../apiserver/fresh-dir.js'
import { BboltReader, snapshotError } from '../apiserver/etcd-snapshot/bbolt-read.js'
import {
  decodeKeyValue,
  decodeLease,
  FINISHED_COMPACT,
  KEY_BUCKET,
  LEASE_BUCKET,
  META_BUCKET,
  parseRevisionKey,
  SCHEDULED_COMPACT,
} from '../apiserver/etcd-snapshot/etcd-schema.js'

const SHA256_BYTES = 32
/** Base keys handed to the store at a time. */
const BASE_BATCH = 1000

export interface SnapshotImportOptions {
  /** A progress display over the "key" bucket's entries. */
  progress?: (total: number) => RevisionProgress
  settings?: Partial<Omit<LogOptions, 'dir'>>
  /** Notes for the operator (the work directory of an interrupted import removed). */
  note?: (line: string) => void
}

/** As the import from a running etcd's, with the file instead of the endpoint. */
export interface SnapshotImportResult extends Omit<EtcdImportResult, 'endpoint' | 'restarts'> {
  file: string
  /** The sha256 trailer, checked; undefined for a bare database. */
  sha256?: string
}

/** The bbolt database inside a snapshot file, its sha256 trailer checked if it has one. */
export function snapshotDatabase(file: Buffer): { db: Buffer; sha256?: string } {
  if (file.length % 512 !== SHA256_BYTES) return { db: file }
  const db = file.subarray(0, file.length - SHA256_BYTES)
  const digest = createHash('sha256').update(db).digest()
  if (!digest.equals(file.subarray(db.length)))
    throw snapshotError('CHECKSUM', 'the sha256 at the end of the file does not match its contents (damaged or truncated)')
  return { db, sha256: digest.toString('hex') }
}

export async function importEtcdSnapshot(file: string, dir: string, o: SnapshotImportOptions = {}): Promise<SnapshotImportResult> {
  const target = resolve(dir)
  await checkTarget(target)
  await removeInterrupted(target, o.note)
  const { db, sha256 } = snapshotDatabase(await readFile(file))
  const reader = new BboltReader(db)
  const result = await buildInPlace(target, (work) => build(reader, work, o))
  return { file, dataDir: target, ...result, ...(sha256 === undefined ? {} : { sha256 }) }
}

/** The compact revision recorded in the meta bucket (0 if none). */
function floorOf(reader: BboltReader): number {
  let floor = 0
  for (const [k, v] of reader.bucket(META_BUCKET) ?? []) {
    const name = k.toString('latin1')
    if (name === FINISHED_COMPACT || name === SCHEDULED_COMPACT) floor = Math.max(floor, parseRevisionKey(v.subarray(0, 17)).main)
  }
  return floor
}

async function build(
  reader: BboltReader,
  work: string,
  o: SnapshotImportOptions,
): Promise<Omit<SnapshotImportResult, 'file' | 'dataDir' | 'sha256'>> {
  const keyBucket = reader.bucket(KEY_BUCKET)
  if (keyBucket === undefined) throw snapshotError('SCHEMA', 'the database has no "key" bucket: not an etcd snapshot')
  const floor = floorOf(reader)
  const leases = [...(reader.bucket(LEASE_BUCKET) ?? [])].map(([, v]) => decodeLease(v))
  let total = 0
  for (const _ of keyBucket) total++
  const store = await StoreImport.create(work, { floor, timestamp: Date.now(), ...(o.settings ? { settings: o.settings } : {}) })
  try {
    const base = store.revision
    const state = new Map<string, KeyValue>()
    let keys = 0
    let inBase = true
    let seen = 0
    let last = { main: 0, sub: -1 }
    let group: ImportedWrite[] = []
    const bar = o.progress?.(total)
    const flush = async () => {
      if (group.length === 0) return
      if (last.main !== store.revision + 1)
        throw snapshotError('SCHEMA', `revision ${store.revision + 1} is missing from the "key" bucket (the history has a gap)`)
      await store.append(last.main, Date.now(), group)
      group = []
    }
    for (const [k, v] of reader.bucket(KEY_BUCKET)!) {
      const rev = parseRevisionKey(k)
      if (rev.main < last.main || (rev.main === last.main && rev.sub <= last.sub))
        throw snapshotError('SCHEMA', `revision keys out of order at ${rev.main}.${rev.sub}`)
      const kv = decodeKeyValue(v)
      if (!rev.tombstone && kv.modRevision !== rev.main)
        throw snapshotError('SCHEMA', `a KeyValue at revision ${rev.main} says mod_revision ${kv.modRevision}`)
      const id = kv.key.toString('latin1')
      bar?.update(++seen)
      if (rev.main <= base) {
        if (rev.tombstone) state.delete(id)
        else state.set(id, kv)
        last = rev
        continue
      }
      if (inBase) {
        keys = await addBase(store, state)
        inBase = false
      }
      if (rev.main !== last.main) await flush()
      last = rev
      const prevKv = state.get(id)
      if (rev.tombstone) {
        if (prevKv === undefined) throw snapshotError('SCHEMA', `a delete at revision ${rev.main} of a key that does not exist`)
        state.delete(id)
        group.push(toWrite({ type: 'DELETE', kv: { ...kv, modRevision: rev.main }, prevKv }))
      } else {
        state.set(id, kv)
        group.push(toWrite(prevKv === undefined ? { type: 'PUT', kv } : { type: 'PUT', kv, prevKv }))
      }
    }
    if (inBase) keys = await addBase(store, state)
    await flush()
    bar?.done()
    const now = Date.now()
    await store.finish(leases.map((l) => ({ id: l.id, ttl: l.ttl, deadline: now + (l.remainingTtl > 0 ? l.remainingTtl : l.ttl) * 1000 })))
    return { revision: store.revision, compactRevision: floor, keys, revisions: store.revision - base, leases: leases.length }
  } catch (err) {
    await store.abandon()
    throw err
  }
}

/** Hands the state at the floor to the store, in batches; returns the number of keys. */
async function addBase(store: StoreImport, state: Map<string, KeyValue>): Promise<number> {
  const kvs = [...state.values()]
  for (let i = 0; i < kvs.length; i += BASE_BATCH) await store.addBase(kvs.slice(i, i + BASE_BATCH))
  return kvs.length
}
