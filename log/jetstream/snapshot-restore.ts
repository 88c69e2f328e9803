/**
 * Opens a member's local copy at start, restoring the cluster's newest usable snapshot first when
 *
 * - the copy is empty (a new member, or one whose data dir was lost): replaying from the snapshot makes
 *   start-up depend on the snapshot interval, not on the length of the history; or
 * - the copy ends before the stream's first sequence (it was down while the stream was purged): the
 *   messages it would need are gone, and only a snapshot at or after the purge point can bridge them.
 *
 * A snapshot is usable if the stream goes on right after it: its sequence is within
 * [first sequence - 1, last sequence]. It is tried newest first and trusted only after checks: the
 * stream message after it names its claimed hash as `prev`, the object store's digest and the snapshot
 * stream's own checksum hold, and the applied marker inside the data (sequence and chain hash) equals
 * what its description claims. A snapshot failing a check is refused with a log line and the next older one is
 * tried. A copy with a gap and no usable snapshot refuses to start.
 *
 * The snapshot is written into a sibling directory (`<dataDir>.restoring`), checked there, and only then
 * replaces the data dir: a crash midway leaves either the old copy or an empty data dir, never a partial
 * copy that claims a sequence. The old copy is dropped: it ends before the stream's first message, so
 * the stream and the snapshot hold everything it had.
 *
 * In the protocol as a whole: docs/cluster-protocol.md, "Refill at start: a member from a snapshot".
 */
import { readdir, rename, rm } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { JetStreamManager, StreamInfo } from 'nats'
import type { Replica, ReplicaStorage } from '../replica.js'
import type { ClusterNames } from './options.js'
import { APPLIED_MARKER, type AppliedMarker } from './records.js'
import { chainMismatch, type SnapshotStore, type StoredSnapshot } from './snapshot-store.js'

export interface RestoreContext {
  jsm: JetStreamManager
  store: SnapshotStore
  names: ClusterNames
  memberName: string
  /** The stream as found at start. */
  stream: StreamInfo
  /** Where the copy lives and the engine that holds it. */
  copy: ReplicaStorage
  say(line: string): void
}

const PROGRESS_EVERY_MS = 2000

/** Whether the copy's directory is empty or absent: the member starts without a copy. */
export async function copyIsEmpty(copy: ReplicaStorage): Promise<boolean> {
  return (await readdir(resolve(copy.dir)).catch(() => [])).length === 0
}

export async function openLocalCopy(c: RestoreContext): Promise<Replica> {
  const dir = resolve(c.copy.dir)
  const empty = await copyIsEmpty(c.copy)
  let view = empty ? undefined : await openCopy(c, dir)
  const marker = view === undefined ? undefined : ((await view.readMeta(APPLIED_MARKER)) as AppliedMarker | undefined)
  const applied = marker?.seq ?? 0
  const { first_seq: first, last_seq: last } = c.stream.state
  const gap = applied + 1 < first
  // A non-empty copy without a marker was not made by this engine: it is never replaced.
  if (!empty && (marker === undefined || !gap)) return view!
  const candidates = (
    await c.store.list((name) => c.say(`kvlog: ignoring object ${name} in ${c.store.bucket}: not a snapshot of this cluster`))
  )
    .filter((s) => s.seq >= Math.max(applied + 1, first - 1) && s.seq <= last)
    .reverse()
  if (candidates.length === 0 && !gap) return view ?? openCopy(c, dir)
  const refused: string[] = []
  for (const s of candidates) {
    await view?.close()
    view = undefined
    try {
      view = await restoreInto(c, s, dir)
      c.say(
        `kvlog: ${c.memberName} restored snapshot ${s.name} (stream sequence ${s.seq}, revision ${s.revision}, taken by ${s.member}); ` +
          `replaying the stream from sequence ${s.seq + 1}`,
      )
      return view
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err)
      refused.push(`${s.name}: ${why}`)
      c.say(`kvlog: ${c.memberName} refuses snapshot ${s.name} from ${c.store.bucket}: ${why}`)
    }
  }
  if (!gap) {
    c.say(`kvlog: ${c.memberName} found no usable snapshot; replaying the stream from its start`)
    return openCopy(c, dir)
  }
  await view?.close()
  throw new Error(
    `${c.memberName}: this member's copy ends at stream sequence ${applied} but stream ${c.names.stream} starts at ${first} ` +
      `(purged below its snapshots), and no usable snapshot in ${c.store.bucket} covers the gap` +
      (refused.length > 0 ? ` (refused: ${refused.join('; ')})` : ' (none at or after sequence ' + (first - 1) + ')') +
      ': refusing to start; check the snapshot bucket, or remove this member and add it again with an empty data dir',
  )
}

function openCopy(c: RestoreContext, dir: string): Promise<Replica> {
  return c.copy.open(dir)
}

/** Restores `s` beside `dir`, checks it, then makes it the data dir; resolves with the opened copy. */
async function restoreInto(c: RestoreContext, s: StoredSnapshot, dir: string): Promise<Replica> {
  const mismatch = await chainMismatch(c.jsm, c.names.stream, s, c.stream.state.last_seq)
  if (mismatch !== undefined) throw new Error(mismatch)
  const tmp = `${dir}.restoring`
  await rm(tmp, { recursive: true, force: true })
  try {
    let lastLine = Date.now()
    await c.copy.restore(await c.store.read(s.name), tmp, (bytes) => {
      if (Date.now() - lastLine < PROGRESS_EVERY_MS) return
      lastLine = Date.now()
      c.say(`kvlog: ${c.memberName} restoring snapshot ${s.name}: ${bytes} of ${s.size} bytes`)
    })
    const copy = await openCopy(c, tmp)
    try {
      const inside = (await copy.readMeta(APPLIED_MARKER)) as AppliedMarker | undefined
      if (inside?.seq !== s.seq || inside.hash !== s.hash) {
        throw new Error(
          `it holds stream sequence ${inside?.seq ?? 'none'} (hash ${inside?.hash ?? 'none'}) but its description says ${s.seq} (${s.hash})`,
        )
      }
    } finally {
      await copy.close()
    }
    await rm(dir, { recursive: true, force: true })
    await rename(tmp, dir)
  } catch (err) {
    await rm(tmp, { recursive: true, force: true })
    throw err
  }
  return openCopy(c, dir)
}
