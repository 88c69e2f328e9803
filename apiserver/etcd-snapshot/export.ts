/**
 * A kvlog store as an etcd 3.4 snapshot file: what etcd's Maintenance.Snapshot streams and `etcdctl
 * snapshot save` writes, so `etcdctl snapshot status` reads it and `etcdctl snapshot restore` (or `etcdutl
 * snapshot restore`) makes an etcd data directory serving the same keys, values and revisions.
 *
 * Read through the Log contract (any engine), at the store's revision H when the export starts:
 *   - the keys live at the compact revision F (a Range at F), each at its own mod revision: what etcd keeps
 *     of the history at or below F after compacting at F;
 *   - every revision F + 1 .. H, its events at sub revisions 0, 1, ... in op order (deletes as tombstones);
 *   - meta: finishedCompactRev = scheduledCompactRev = F (when F > 0), consistent_index = H;
 *   - the leases with their granted and remaining TTLs (etcd restarts a lease's clock from the remaining).
 * The file is the bbolt database followed by the sha256 of it, as etcd streams it (a database is a whole
 * number of 4 KiB pages, which is how etcdctl tells that the 32 bytes after it are a checksum).
 *
 * The file is built in memory (about twice the size of the retained history). A compaction that passes F
 * while the history is read makes the export start over from the new floor (up to MAX_ATTEMPTS reads in
 * all; then COMPACTED).
 */
import { createHash } from 'node:crypto'
import type { Log } from '../../log/backend.js'
import { isKvlogError } from '../../log/errors.js'
import type { KeyValue } from '../../log/types.js'
import { writeBbolt, type BboltBucket } from './bbolt-write.js'
import {
  CONSISTENT_INDEX,
  encodeKeyValue,
  encodeLease,
  encodeTombstone,
  ETCD_BUCKETS,
  FINISHED_COMPACT,
  KEY_BUCKET,
  LEASE_BUCKET,
  META_BUCKET,
  revisionKey,
  SCHEDULED_COMPACT,
  u64,
} from './etcd-schema.js'

const ALL = Buffer.from([0])
/** Keys per Range page and events per history read. */
const PAGE = 1000

export interface EtcdSnapshot {
  /** The store revision the file holds (H). */
  revision: number
  compactRevision: number
  /** Entries of the "key" bucket (etcdctl snapshot status counts every bucket's entries). */
  keyEntries: number
  leases: number
  /** The file's bytes: the database's pages, then the 32-byte sha256 of them. */
  parts: Buffer[]
  size: number
  sha256: string
}

/** Reads of the store before a compaction racing the export fails it. */
const MAX_ATTEMPTS = 3

export async function exportEtcdSnapshot(log: Log): Promise<EtcdSnapshot> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await exportOnce(log)
    } catch (err) {
      if (!isKvlogError(err, 'COMPACTED') || attempt >= MAX_ATTEMPTS) throw err
    }
  }
}

async function exportOnce(log: Log): Promise<EtcdSnapshot> {
  const head = log.revision
  const floor = log.compactRevision
  const keyEntries: Array<[Buffer, Buffer]> = []
  if (floor > 1) {
    const base: KeyValue[] = []
    let from = ALL
    for (;;) {
      const page = await log.range(from, { rangeEnd: ALL, revision: floor, limit: PAGE })
      base.push(...page.kvs)
      if (!page.more || page.kvs.length === 0) break
      from = Buffer.concat([page.kvs[page.kvs.length - 1].key, ALL])
    }
    // Keys written by one revision share its main revision: number them apart, in key order.
    base.sort((a, b) => a.modRevision - b.modRevision || Buffer.compare(a.key, b.key))
    let sub = 0
    base.forEach((kv, i) => {
      sub = i > 0 && base[i - 1].modRevision === kv.modRevision ? sub + 1 : 0
      keyEntries.push([revisionKey(kv.modRevision, sub), encodeKeyValue(kv)])
    })
  }
  for (let next = Math.max(floor, 1) + 1; next <= head;) {
    const h = await log.history(ALL, { rangeEnd: ALL, fromRevision: next, toRevision: head, limit: PAGE })
    for (const entry of h.entries) {
      entry.events.forEach((e, sub) => {
        if (e.type === 'PUT') keyEntries.push([revisionKey(entry.revision, sub), encodeKeyValue(e.kv)])
        else keyEntries.push([revisionKey(entry.revision, sub, true), encodeTombstone(e.kv.key)])
      })
    }
    if (h.nextRevision <= next) break
    next = h.nextRevision
  }
  const leaseEntries: Array<[Buffer, Buffer]> = []
  for (const id of [...log.leases()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const l = log.leaseTimeToLive(id)
    if (l === undefined) continue
    // At least 1: etcd reads 0 as "not recorded" and would start the whole TTL again.
    leaseEntries.push([u64(id), encodeLease({ id, ttl: l.grantedTtl, remainingTtl: Math.max(1, l.ttl) })])
  }
  const meta: Array<[Buffer, Buffer]> = [[Buffer.from(CONSISTENT_INDEX), u64(head)]]
  if (floor > 0) {
    meta.push([Buffer.from(FINISHED_COMPACT), revisionKey(floor, 0)])
    meta.push([Buffer.from(SCHEDULED_COMPACT), revisionKey(floor, 0)])
  }
  meta.sort((a, b) => Buffer.compare(a[0], b[0]))
  const contents: Record<string, Array<[Buffer, Buffer]>> = { [KEY_BUCKET]: keyEntries, [LEASE_BUCKET]: leaseEntries, [META_BUCKET]: meta }
  const buckets: BboltBucket[] = ETCD_BUCKETS.map((name) => ({ name: Buffer.from(name), entries: contents[name] ?? [] }))
  const pages = writeBbolt(buckets)
  const hash = createHash('sha256')
  for (const p of pages) hash.update(p)
  const digest = hash.digest()
  const size = pages.reduce((n, p) => n + p.length, 0) + digest.length
  return {
    revision: head,
    compactRevision: floor,
    keyEntries: keyEntries.length,
    leases: leaseEntries.length,
    parts: [...pages, digest],
    size,
    sha256: digest.toString('hex'),
  }
}
