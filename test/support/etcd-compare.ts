/**
 * Comparing an etcd and a kvlog over the etcd v3 API (import and follow tests): every key at a revision,
 * the history as a watch with prevKv reports it, the leases with their TTLs, as comparable plain values.
 */
import type { EtcdGrpc } from './etcd-grpc.js'

export type Message = Record<string, unknown>

const ALL = Buffer.from([0])

/** Every key at `revision` as comparable plain values. */
export async function rangeAll(c: EtcdGrpc, revision: number): Promise<unknown[]> {
  const r = await c.call('KV', 'Range', { key: ALL, range_end: ALL, revision })
  return (r.kvs as Message[]).map(plainKv)
}

export function plainKv(kv: Message): unknown {
  return {
    key: (kv.key as Buffer).toString('hex'),
    value: (kv.value as Buffer).toString('hex'),
    create: String(kv.create_revision),
    mod: String(kv.mod_revision),
    version: String(kv.version),
    lease: String(kv.lease),
  }
}

/** The events of a watch from `from` with prevKv, until revision `to` has been seen. */
export async function watchAll(c: EtcdGrpc, from: number, to: number): Promise<unknown[]> {
  const stream = c.stream('Watch', 'Watch')
  const events: unknown[] = []
  try {
    stream.write({ create_request: { key: ALL, range_end: ALL, start_revision: from, prev_kv: true } })
    for await (const m of stream as AsyncIterable<Message>) {
      if (m.canceled === true) throw new Error(`watch canceled: ${String(m.cancel_reason)} (compact ${String(m.compact_revision)})`)
      let last = 0
      for (const e of m.events as Message[]) {
        const kv = e.kv as Message
        last = Number(kv.mod_revision)
        events.push({ type: e.type, kv: plainKv(kv), prev: e.prev_kv ? plainKv(e.prev_kv as Message) : null })
      }
      if (last >= to) break
    }
  } finally {
    stream.cancel()
  }
  return events
}

export async function leases(c: EtcdGrpc): Promise<Array<{ id: string; granted: number; ttl: number }>> {
  const r = await c.call('Lease', 'LeaseLeases', {})
  const out = []
  for (const l of r.leases as Message[]) {
    const t = await c.call('Lease', 'LeaseTimeToLive', { ID: l.ID })
    out.push({ id: String(l.ID), granted: Number(t.grantedTTL), ttl: Number(t.TTL) })
  }
  return out.sort((x, y) => (x.id < y.id ? -1 : 1))
}

export const revisionOf = (m: Message) => Number((m.header as Message).revision)
