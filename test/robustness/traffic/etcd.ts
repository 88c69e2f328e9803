/**
 * Traffic shaped like etcd's own robustness "etcd" profile, on ten keys under /etcd/: put, get, prefix
 * list, keys-only and count-only lists, a multi-op txn (two puts and a read), compare-and-set on the value
 * this client last saw, put with a lease (granted on demand), lease revoke (its keys go with it), delete,
 * and now and then a defragment. One watch on the prefix per client, resumed across faults.
 */
import { isError } from '../linearizability/types.js'
import type { RecordingClient } from './client.js'
import { eachClient, pick, type Profile, type TrafficContext } from './traffic.js'
import { RecordedWatch } from './watcher.js'

const PREFIX = '/etcd/'
const PREFIX_END = '/etcd0'
const key = (random: () => number) => `${PREFIX}k${Math.floor(random() * 10)}`

export const etcd: Profile = {
  name: 'etcd',
  async run(ctx) {
    const watches = ctx.clients.map(
      (c) =>
        new RecordedWatch(c.g, `c${c.id}`, { key: PREFIX, end: PREFIX_END, startRevision: 1, prevKv: true }, ctx.watches, {
          progressEveryMs: 100,
        }),
    )
    const leases = new Map<number, string>()
    const values = new Map<string, string>()
    await eachClient(ctx, ctx.clients, (c) => step(ctx, c, leases, values))
    for (const w of watches) w.end()
  },
}

async function step(ctx: TrafficContext, c: RecordingClient, leases: Map<number, string>, values: Map<string, string>): Promise<void> {
  const r = ctx.random()
  const k = key(ctx.random)
  if (r < 0.2) {
    const value = ctx.value(c.id)
    const out = await c.put(k, value)
    if (!isError(out)) values.set(k, value)
  } else if (r < 0.35) await c.range({ key: k })
  else if (r < 0.45) await c.range({ key: PREFIX, end: PREFIX_END })
  else if (r < 0.5) await c.range({ key: PREFIX, end: PREFIX_END, keysOnly: true })
  else if (r < 0.55) await c.range({ key: PREFIX, end: PREFIX_END, countOnly: true })
  else if (r < 0.65) {
    const other = key(ctx.random)
    const puts = k === other ? [k] : [k, other]
    await c.txn(
      [],
      [
        ...puts.map((p) => ({ type: 'put' as const, key: p, value: ctx.value(c.id) })),
        { type: 'range', req: { key: PREFIX, end: PREFIX_END } },
      ],
      [],
    )
  } else if (r < 0.8) {
    const expected = values.get(k) ?? ''
    const value = ctx.value(c.id)
    await c.txn(
      [{ key: k, target: 'VALUE', result: 'EQUAL', value: expected }],
      [{ type: 'put', key: k, value }],
      [{ type: 'range', req: { key: k } }],
    )
  } else if (r < 0.88) {
    let lease = leases.get(c.id)
    if (lease === undefined) {
      const out = await c.leaseGrant(600)
      if (isError(out) || !('id' in out)) return
      leases.set(c.id, (lease = out.id))
    }
    await c.put(k, ctx.value(c.id), lease)
  } else if (r < 0.93) {
    const lease = leases.get(c.id)
    if (lease === undefined) return
    leases.delete(c.id)
    await c.leaseRevoke(lease)
  } else if (r < 0.99) await c.delete(k)
  else if (c.id === 0) await c.defragment()
  else await c.range({ key: pick(ctx.random, [k, PREFIX]) })
}
