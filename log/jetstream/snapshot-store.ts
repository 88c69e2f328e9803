/**
 * The cluster's snapshots: copies of a member's local copy (the copy's Log.snapshot byte stream, with its own
 * checksum) in a JetStream object store bucket named from the cluster (kvlog_<cluster>_snapshots), with
 * the stream's replicas. Each object is named by the stream sequence the copy had applied
 * (`seq-<16 digits>`, so names sort like sequences) and described by a JSON record: the sequence, the
 * chain hash of the message at that sequence (messages.ts `prev`), the revision, and the cluster name.
 *
 * The description only says which object to try; a restore trusts what it finds inside the object (the
 * checksum, then the applied marker the copy carries), never the description alone.
 */
import { StorageType, type JetStreamClient, type JetStreamManager, type ObjectInfo, type ObjectStore } from 'nats'
import { decodeMessage, messageHash } from './messages.js'
import type { ClusterNames } from './options.js'

export const SNAPSHOT_FORMAT = 1

/** What an object's description says about the snapshot it holds. */
export interface SnapshotRecord {
  kvlog: 'snapshot'
  format: number
  cluster: string
  /** The last stream sequence the copy had applied. */
  seq: number
  /** messageHash() of the message at `seq`: the next message's `prev` must equal it. */
  hash: string
  /** The store revision the copy was at. */
  revision: number
  /** The commit timestamp of the message at `seq`. */
  ts: number
  /** The member that took it, and when (ms since the epoch). */
  member: string
  takenAt: number
}

export interface StoredSnapshot extends SnapshotRecord {
  name: string
  size: number
}

export function snapshotName(seq: number): string {
  return `seq-${String(seq).padStart(16, '0')}`
}

/** Parses an object's description; undefined if it is not a kvlog snapshot of cluster `cluster`. */
export function parseRecord(info: Pick<ObjectInfo, 'description'>, cluster: string): SnapshotRecord | undefined {
  let r: Partial<SnapshotRecord>
  try {
    r = JSON.parse(info.description ?? '') as Partial<SnapshotRecord>
  } catch {
    return undefined
  }
  if (
    r === null ||
    typeof r !== 'object' ||
    r.kvlog !== 'snapshot' ||
    r.format !== SNAPSHOT_FORMAT ||
    r.cluster !== cluster ||
    !Number.isSafeInteger(r.seq) ||
    (r.seq as number) < 1 ||
    typeof r.hash !== 'string' ||
    !Number.isSafeInteger(r.revision)
  ) {
    return undefined
  }
  return r as SnapshotRecord
}

/**
 * Checks a snapshot's claimed sequence and hash against the stream: the message after it names the hash
 * as its `prev` (at the stream's end: the last message has that hash). Resolves with why not, or
 * undefined when it matches. Needs the messages at `seq` or `seq + 1` to be in the stream.
 */
export async function chainMismatch(
  jsm: JetStreamManager,
  stream: string,
  s: Pick<SnapshotRecord, 'seq' | 'hash'>,
  last: number,
): Promise<string | undefined> {
  if (s.seq > last) return `its sequence ${s.seq} is past the stream's end (${last})`
  const at = s.seq < last ? s.seq + 1 : s.seq
  const msg = await jsm.streams.getMessage(stream, { seq: at }).catch(() => undefined)
  if (msg === undefined) return `stream message ${at} is not in the stream`
  const found = s.seq < last ? decodeMessage(msg.data).prev : messageHash(msg.data)
  return found === s.hash
    ? undefined
    : `the stream's history at sequence ${s.seq} is ${found || 'empty'}, not ${s.hash}: it comes from another history`
}

/** Tries of an object listing whose stream lookup found no stream or timed out (listObjects). */
const LIST_LOOKUPS = 8

/**
 * The bucket's objects. nats.js finds the bucket's stream by subject for each listing, and that lookup can
 * come back empty for a moment although the stream exists, or time out: seen right after the bucket was
 * made, with the JetStream cluster starting or under load (a fresh member failed to start on it). The
 * bucket is made by open(), so such a lookup is retried a few times before it counts, as the other
 * set-up steps are (connection.ts: whileUnavailable).
 */
export async function listObjects(os: Pick<ObjectStore, 'list'>): Promise<ObjectInfo[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await os.list()
    } catch (err) {
      const code = (err as { code?: string }).code
      const transient = /no stream matches subject/.test(String(err)) || code === 'TIMEOUT' || code === '503'
      if (attempt >= LIST_LOOKUPS || !transient) throw err
      await new Promise((r) => setTimeout(r, 100 * attempt))
    }
  }
}

export class SnapshotStore {
  private constructor(
    private readonly os: ObjectStore,
    private readonly cluster: string,
    readonly bucket: string,
  ) {}

  /** Opens (creating on first use) the cluster's snapshot bucket. */
  static async open(js: JetStreamClient, names: ClusterNames, clusterName: string, replicas: number): Promise<SnapshotStore> {
    const os = await js.views.os(names.snapshots, {
      description: `kvlog snapshots of cluster ${clusterName}`,
      storage: StorageType.File,
      replicas,
    })
    return new SnapshotStore(os, clusterName, names.snapshots)
  }

  /**
   * The snapshots of this cluster, oldest first. Objects that are not (the description does not parse,
   * or names another cluster) are reported through `skip` and otherwise left alone.
   */
  async list(skip?: (name: string) => void): Promise<StoredSnapshot[]> {
    const out: StoredSnapshot[] = []
    for (const info of await listObjects(this.os)) {
      if (info.deleted) continue
      const r = parseRecord(info, this.cluster)
      if (r === undefined || info.name !== snapshotName(r.seq)) {
        skip?.(info.name)
        continue
      }
      out.push({ ...r, name: info.name, size: info.size })
    }
    return out.sort((a, b) => a.seq - b.seq)
  }

  /** Stores a snapshot; resolves once the object store has acknowledged every chunk. */
  async put(record: SnapshotRecord, chunks: AsyncIterable<Buffer>): Promise<ObjectInfo> {
    const iterator = chunks[Symbol.asyncIterator]()
    const rs = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await iterator.next()
        if (next.done === true) controller.close()
        else controller.enqueue(next.value)
      },
      async cancel() {
        await iterator.return?.()
      },
    })
    return this.os.put({ name: snapshotName(record.seq), description: JSON.stringify(record) }, rs)
  }

  /**
   * The object's bytes as chunks. The object store checks its own digest at the end: a mismatch, or a
   * chunk missing, fails the iteration.
   */
  async read(name: string): Promise<AsyncIterable<Buffer>> {
    const result = await this.os.get(name)
    if (result === null) throw new Error(`snapshot ${name} is gone from bucket ${this.bucket}`)
    return (async function* () {
      const reader = result.data.getReader()
      try {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          yield Buffer.from(value.buffer, value.byteOffset, value.byteLength)
        }
      } finally {
        reader.releaseLock()
      }
      const err = await result.error
      if (err !== null && err !== undefined) throw err
    })()
  }

  async delete(name: string): Promise<void> {
    await this.os.delete(name)
  }
}
