/**
 * What the server showed right after each restart, against everything observed before it:
 *
 *   revision     the revision is at least every revision acknowledged or read before the crash (never
 *                lowered, so never reused), and the compact revision at least every compaction answered;
 *   durability   the history re-read after the restart equals the oracle revision by revision (nothing
 *                acknowledged was lost or changed), and the state at the restart revision equals the replay.
 */
import { canonKv, type OracleEvent } from '../../apiserver/watch/checker.js'
import { describeOp, type OpRecord, type RecoveryCheck } from '../history.js'
import { canonList, selectKvs, type Timeline } from './model.js'
import { byRevision } from './operations.js'

const EVERY_KEY = { keyBase64: 'AA==', fromKey: true }

export function checkRecoveries(recoveries: readonly RecoveryCheck[], ops: readonly OpRecord[], oracleEvents: Map<number, OracleEvent[]>, timeline: Timeline, sink: (v: string) => void): void {
  for (const rc of recoveries) {
    const name = `restart ${rc.index} (${rc.fault})`
    let seen: OpRecord | undefined
    let compacted: OpRecord | undefined
    for (const r of ops) {
      if (r.outcome !== 'ok' || r.end >= rc.at || r.result === undefined) continue
      if (seen === undefined || r.result.revision > seen.result!.revision) seen = r
      if (r.op.type === 'compact' && (compacted === undefined || r.op.revision > (compacted.op as { revision: number }).revision)) compacted = r
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
      if (a !== b) sink(`[durability] ${name}: revision ${rev} after the restart is ${b.slice(0, 200) || 'empty'}, before it was ${a.slice(0, 200) || 'empty'}`)
    }
    if (timeline.covers(rc.revision)) {
      const want = canonList(selectKvs(timeline.stateAt(rc.revision), EVERY_KEY))
      const got = canonList(rc.kvs)
      if (want !== got) sink(`[durability] ${name}: the state at ${rc.revision} after the restart differs from the replayed log: ${got.slice(0, 200)} vs ${want.slice(0, 200)}`)
    }
  }
}
