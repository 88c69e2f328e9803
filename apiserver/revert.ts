/**
 * Putting a key range back to its state at an earlier revision, online: one new transaction that puts
 * every key whose value (or lease) differs from what it was at that revision, and deletes every key that
 * did not exist then. Revisions keep moving forward; watchers see ordinary PUT and DELETE events. Front
 * doors call this; it goes through the Log contract only.
 *
 * The transaction is guarded by a compare that no key in the range was modified after the state it was
 * planned against (MOD < head + 1 over the range); when a concurrent write breaks it, the plan is made
 * again (a few times, then UNAVAILABLE). A delete in the range meanwhile is not seen by that compare: the
 * deleted key stays deleted unless the revert puts it back anyway.
 *
 * A key's lease is restored when that lease is still alive; a key whose lease has ended since is put
 * back without one (a put naming a dead lease would fail). The plan is at most maxTxnOps writes
 * (TOO_MANY_OPS otherwise: revert a narrower prefix, or raise maxTxnOps).
 */
import type { Log } from '../log/backend.js'
import { futureRevision, KvlogError } from '../log/errors.js'
import type { KeyValue, Op } from '../log/types.js'

export interface RevertChange {
  change: 'added' | 'removed' | 'modified'
  key: Buffer
  /** The key now (absent when it was removed since the target revision). */
  now?: KeyValue
  /** The key at the target revision (absent when it was added since). */
  then?: KeyValue
}

export interface RevertResult {
  /** The revision the plan was made against (the head when it was read). */
  fromRevision: number
  /** The revision of the revert's transaction; absent for a dry run or when nothing differed. */
  revision?: number
  changes: RevertChange[]
}

const ATTEMPTS = 5

/** Keys of [key, rangeEnd) at `revision`, in key order, keyed by their bytes as latin1. */
async function stateAt(log: Log, key: Buffer, rangeEnd: Buffer | undefined, revision: number): Promise<Map<string, KeyValue>> {
  const r = await log.range(key, { rangeEnd, revision })
  return new Map(r.kvs.map((kv) => [kv.key.toString('latin1'), kv]))
}

/** The writes that turn the state `now` into `then`: puts for changed and removed keys, deletes for added ones. */
export function plan(then: Map<string, KeyValue>, now: Map<string, KeyValue>): RevertChange[] {
  const changes: RevertChange[] = []
  for (const [id, old] of then) {
    const cur = now.get(id)
    if (cur === undefined) changes.push({ change: 'removed', key: old.key, then: old })
    else if (!cur.value.equals(old.value) || cur.lease !== old.lease)
      changes.push({ change: 'modified', key: old.key, now: cur, then: old })
  }
  for (const [id, cur] of now) if (!then.has(id)) changes.push({ change: 'added', key: cur.key, now: cur })
  return changes.sort((a, b) => Buffer.compare(a.key, b.key))
}

export async function revert(
  log: Log,
  key: Buffer,
  rangeEnd: Buffer | undefined,
  revision: number,
  dryRun: boolean,
): Promise<RevertResult> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const head = log.revision
    if (revision > head) throw futureRevision(revision, head)
    const [then, now] = await Promise.all([stateAt(log, key, rangeEnd, revision), stateAt(log, key, rangeEnd, head)])
    const changes = plan(then, now)
    if (dryRun || changes.length === 0) return { fromRevision: head, changes }
    const success: Op[] = changes.map((c) => {
      if (c.then === undefined) return { type: 'delete', key: c.key }
      const lease = c.then.lease !== 0n && log.leaseTimeToLive(c.then.lease) !== undefined ? c.then.lease : 0n
      return { type: 'put', key: c.key, value: c.then.value, lease }
    })
    const r = await log.txn({ compare: [{ key, rangeEnd, target: 'MOD', result: 'LESS', value: head + 1 }], success })
    if (r.succeeded) return { fromRevision: head, revision: r.revision, changes }
  }
  throw new KvlogError('UNAVAILABLE', `the range kept changing while it was being reverted (${ATTEMPTS} attempts); retry`)
}
