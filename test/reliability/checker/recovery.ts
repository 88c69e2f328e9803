/**
 * What the server showed right after each restart, against everything observed before it:
 *
 *   revision     the revision is at least every revision acknowledged or read before the crash, and every
 *                revision a watch was shown (never lowered, so never reused), and the compact revision at
 *                least every compaction answered;
 *   durability   the history re-read after the restart equals the oracle revision by revision (nothing
 *                acknowledged was lost or changed), and the state at the restart revision equals the replay.
 */
import { canonKv, type LogicalWatch, type OracleEvent } from '../../apiserver/watch/checker.js'
import type { Received } from '../../support/watch-client.js'
import { describeOp, type OpRecord, type RecoveryCheck } from '../history.js'
import { canonList, selectKvs, type Timeline } from './model.js'
import { byRevision } from './operations.js'

const EVERY_KEY = { keyBase64: 'AA==', fromKey: true }

interface Shown {
  at: number
  revision: number
  watch: string
}

/** Every revision a watch was shown (events, progress), with its arrival time, in arrival order. */
function shownToWatches(watches: readonly LogicalWatch[]): Shown[] {
  const out: Shown[] = []
  for (const w of watches) {
    for (const s of w.segments) {
      for (const m of s.messages) {
        const rec = m as Received
        if (typeof rec.at !== 'number') continue
        if ((rec.msg.type === 'events' || rec.msg.type === 'progress') && typeof rec.msg.revision === 'number') {
          out.push({ at: rec.at, revision: rec.msg.revision, watch: `${w.name} ${s.label ?? ''}` })
        }
      }
    }
  }
  return out.sort((a, b) => a.at - b.at)
}

export function checkRecoveries(
  recoveries: readonly RecoveryCheck[],
  ops: readonly OpRecord[],
  watches: readonly LogicalWatch[],
  oracleEvents: Map<number, OracleEvent[]>,
  timeline: Timeline,
  sink: (v: string) => void,
): void {
  const shown = shownToWatches(watches)
  for (const rc of recoveries) {
    const name = `restart ${rc.index} (${rc.fault})`
    let watched: Shown | undefined
    for (const s of shown) {
      if (s.at >= rc.at) break
      if (watched === undefined || s.revision > watched.revision) watched = s
    }
    if (watched !== undefined && rc.revision < watched.revision) {
      sink(
        `[revision] ${name}: came back at revision ${rc.revision}, below revision ${watched.revision} that watch ${watched.watch} had been shown`,
      )
    }
    let seen: OpRecord | undefined
    let compacted: OpRecord | undefined
    for (const r of ops) {
      if (r.outcome !== 'ok' || r.end >= rc.at || r.result === undefined) continue
      if (seen === undefined || r.result.revision > seen.result!.revision) seen = r
      if (r.op.type === 'compact' && (compacted === undefined || r.op.revision > (compacted.op as { revision: number }).revision))
        compacted = r
    }
    if (seen !== undefined && rc.revision < seen.result!.revision) {
      sink(`[revision] ${name}: came back at revision ${rc.revision}, below ${seen.result!.revision} of ${describeOp(seen)}`)
    }
    if (compacted !== undefined && rc.compactRevision < (compacted.op as { revision: number }).revision) {
      sink(`[revision] ${name}: came back with compact revision ${rc.compactRevision}, below the acknowledged ${describeOp(compacted)}`)
    }
    const reread = byRevision({ first: rc.compactRevision, last: rc.revision, events: rc.events })
    const top = Math.min(rc.revision, timeline.last)
    for (let rev = Math.max(rc.compactRevision, timeline.first); rev <= top; rev++) {
      const a = (oracleEvents.get(rev) ?? []).map((e) => `${e.type} ${canonKv(e.kv)}`).join('; ')
      const b = (reread.get(rev) ?? []).map((e) => `${e.type} ${canonKv(e.kv)}`).join('; ')
      if (a !== b)
        sink(
          `[durability] ${name}: revision ${rev} after the restart is ${b.slice(0, 200) || 'empty'}, before it was ${a.slice(0, 200) || 'empty'}`,
        )
    }
    if (timeline.covers(rc.revision)) {
      const want = canonList(timeline.known(selectKvs(timeline.stateAt(rc.revision), EVERY_KEY)))
      const got = canonList(timeline.known(rc.kvs))
      if (want !== got)
        sink(
          `[durability] ${name}: the state at ${rc.revision} after the restart differs from the replayed log: ${got.slice(0, 200)} vs ${want.slice(0, 200)}`,
        )
    }
  }
}
