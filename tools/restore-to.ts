/**
 * `kvlog snapshot restore FILE --data-dir DIR --to-revision REV | --to-time TIME` (main.ts, offline): a
 * store that ends at REV, for recovering from a bad change. The history above REV is dropped: the new
 * store's revision is REV and a Range at any retained revision answers what the snapshot's store answered
 * there. Writes after the restore continue at REV + 1.
 *
 * The snapshot is first restored whole into a scratch directory beside DIR, opened as a log (lease expiry
 * off, so it is read exactly as saved), and read through the Log contract into a new store built with
 * StoreImport, beside DIR too, then renamed to DIR once complete and synced; any failure leaves DIR as it
 * was. What the new store keeps:
 *
 * - the compact revision (REV below it: COMPACTED; above the snapshot's revision: FUTURE_REVISION); the
 *   state at the floor and every entry after it up to REV with its commit time and author (the floor's own
 *   entry is kept as its state, as an import keeps it: history reads start at floor + 1);
 * - TIME maps to the last revision committed at or before it (the state a read at TIME saw);
 * - leases the snapshot holds, with their deadlines (one already past is revoked right after the first
 *   open, as after any restore). A lease that keys at REV name but the snapshot no longer holds (revoked or
 *   expired after REV) cannot be brought back (its TTL is not in the history): it is written already
 *   expired, so its keys go in the first revisions after the open, as if it had expired while stopped;
 * - the records of the layers above the log (auth, identity, alarms), with consumer cursors ahead of REV
 *   moved back to REV (their consumers resume from REV + 1 and see the writes made after the restore).
 */
import { mkdir, mkdtemp, readdir, rename, rm, rmdir } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import type { Cursor } from '../compaction/cursors.js'
import { DEFAULT_LOG_OPTIONS, KvlogError, openLog, type Log } from '../log/index.js'
import { readMetaRecords, StoreImport, type ImportedLease } from '../log/level/import.js'
import { compacted, futureRevision } from '../log/errors.js'
import { toWrite } from '../apiserver/etcd-follow/import-etcd.js'
import { restoreFile, type Progress, type RestoredFile } from './restore.js'
import { revisionAsOf } from '../apiserver/revision-as-of.js'

/** A point in the history: a revision, or a time (ms since the epoch). */
export type RestorePoint = { revision: number } | { time: number }

export interface RestoredToRevision extends RestoredFile {
  /** The new store's revision (REV). */
  revision: number
  compactRevision: number
  /** The snapshot's revision: the entries above `revision` were dropped. */
  snapshotRevision: number
  /** Keys live at `revision`. */
  keys: number
}

const ALL = Buffer.from([0])
const PAGE = 1000
/** The record compaction/cursors.ts keeps its cursors in. */
const CURSORS_RECORD = 'cursors'

export async function restoreToRevision(
  file: string,
  dir: string,
  point: RestorePoint,
  progress: (totalBytes: number) => Progress,
): Promise<RestoredToRevision> {
  const target = resolve(dir)
  await checkTarget(target)
  await mkdir(dirname(target), { recursive: true })
  const scratch = await mkdtemp(join(dirname(target), `.${basename(target)}.snapshot-`))
  const work = await mkdtemp(join(dirname(target), `.${basename(target)}.restore-`))
  try {
    const restored = await restoreFile(file, scratch, progress)
    const meta = await readMetaRecords(scratch)
    const source = await openLog({ dir: scratch, leaseCheckInterval: 0, compactionThread: false })
    let cut: Omit<RestoredToRevision, keyof RestoredFile>
    try {
      cut = await copyUpTo(source, work, await targetRevision(source, point), meta)
    } finally {
      await source.close()
    }
    await checkTarget(target)
    await rmdir(target).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err
    })
    await rename(work, target)
    return { ...restored, ...cut }
  } catch (err) {
    await rm(work, { recursive: true, force: true })
    throw err
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

async function targetRevision(log: Log, point: RestorePoint): Promise<number> {
  const revision = 'revision' in point ? point.revision : await revisionAsOf(log, point.time)
  if (revision > log.revision) throw futureRevision(revision, log.revision)
  if (revision < log.compactRevision) throw compacted(revision, log.compactRevision, log.revision)
  return revision
}

async function copyUpTo(
  source: Log,
  work: string,
  revision: number,
  meta: Array<[string, unknown]>,
): Promise<Omit<RestoredToRevision, keyof RestoredFile>> {
  const floor = source.compactRevision
  const first = await source.history(ALL, { rangeEnd: ALL, fromRevision: floor + 1, toRevision: revision, limit: 1 })
  // The empty entry at the base must not be later than the first entry kept (timestamps never go back).
  const store = await StoreImport.create(work, { floor, timestamp: first.entries[0]?.timestamp ?? Date.now() })
  try {
    const base = store.revision
    if (base > 1) {
      for (let from: Buffer | undefined = ALL; from !== undefined;) {
        const page = await source.range(from, { rangeEnd: ALL, revision: base, limit: PAGE })
        await store.addBase(page.kvs)
        from = page.more ? Buffer.concat([page.kvs[page.kvs.length - 1].key, ALL]) : undefined
      }
    }
    for (let next = base + 1; next <= revision;) {
      const page = await source.history(ALL, { rangeEnd: ALL, fromRevision: next, toRevision: revision, prevKv: true, limit: PAGE })
      for (const entry of page.entries) {
        if (entry.revision !== store.revision + 1)
          throw new KvlogError('INTERNAL', `restore: revision ${store.revision + 1} has no entry in the snapshot`)
        await store.append(entry.revision, entry.timestamp, entry.events.map(toWrite), entry.author)
      }
      next = page.nextRevision
      if (!page.more) break
    }
    const { keys, leaseIds } = await liveAt(source, revision)
    const now = Date.now()
    const leases: ImportedLease[] = []
    for (const id of source.leases()) {
      const l = source.leaseTimeToLive(id)
      if (l !== undefined) leases.push({ id, ttl: l.grantedTtl, deadline: now + l.ttl * 1000 })
      leaseIds.delete(id)
    }
    for (const id of leaseIds) leases.push({ id, ttl: DEFAULT_LOG_OPTIONS.leaseMinTtl, deadline: now })
    for (const [name, value] of meta) store.putMeta(name, name === CURSORS_RECORD ? cursorsAt(value as Cursor[], revision) : value)
    await store.finish(leases)
    return { revision: store.revision, compactRevision: floor, snapshotRevision: source.revision, keys }
  } catch (err) {
    await store.abandon()
    throw err
  }
}

/** The number of keys live at `revision` and the leases they name. */
async function liveAt(log: Log, revision: number): Promise<{ keys: number; leaseIds: Set<bigint> }> {
  let keys = 0
  const leaseIds = new Set<bigint>()
  for (let from: Buffer | undefined = ALL; from !== undefined;) {
    const page = await log.range(from, { rangeEnd: ALL, revision, limit: PAGE })
    keys += page.kvs.length
    for (const kv of page.kvs) if (kv.lease !== 0n) leaseIds.add(kv.lease)
    from = page.more ? Buffer.concat([page.kvs[page.kvs.length - 1].key, ALL]) : undefined
  }
  return { keys, leaseIds }
}

function cursorsAt(cursors: Cursor[], revision: number): Cursor[] {
  return cursors.map((c) => (c.revision > revision ? { ...c, revision } : c))
}

/** DIR must be missing or an empty directory. */
async function checkTarget(target: string): Promise<void> {
  const existing = await readdir(target).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return []
    throw err
  })
  if (existing.length > 0) throw new Error(`${target} is not empty: restore writes a fresh data directory`)
}
