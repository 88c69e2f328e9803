/**
 * Grows an etcd store for bench:scale through etcd's own API, in the shape grow.ts gives kvlog's: the same
 * keys and values, every key written twice (two versions). Puts go in Txns of ETCD_TXN_PUTS over several
 * connections, a few Txns in flight on each, a block of keys at a time (the block's first versions, then
 * its second), so that every key grown has both. It stops after the keys asked for, or before a block
 * that would take the backend past `maxDbBytes` (etcd refuses writes past its quota): the blocks grown so
 * far are the store.
 */
import type { Message } from '../../apiserver/etcd/proto.js'
import { call, connect, type EtcdClient } from '../compare/grpc.js'
import { scaleKey, scaleValues } from './grow.js'

/** Puts per Txn: etcd keeps its recent raft entries in memory, so an entry stays well under a MiB. */
export const ETCD_TXN_PUTS = 32
const CONNECTIONS = 8
const IN_FLIGHT_PER_CONNECTION = 4
/** Keys per block: the backend's size is checked between blocks. */
const BLOCK_KEYS = 20_000

export interface EtcdGrown {
  keys: number
  revisions: number
  /** The backend's size (Status dbSize) once grown. */
  dbBytes: number
}

type Txn = (request: Message, callback: (err: Error | null, response?: Message) => void) => void

/** etcd's Status of the member at `client`: the backend's size and the store's revision. */
export async function etcdStatus(client: EtcdClient): Promise<{ dbBytes: number; revision: number }> {
  const r = await call(client.maintenance.Status.bind(client.maintenance), {})
  return { dbBytes: Number(r.dbSize), revision: Number((r.header as Message).revision) }
}

/** Writes up to `keys` keys of two versions each into the etcd at `target` ("host:port"). */
export async function growEtcd(
  target: string,
  keys: number,
  maxDbBytes: number,
  onProgress: (done: number, total: number) => void,
): Promise<EtcdGrown> {
  const valueOf = scaleValues()
  const clients = Array.from({ length: CONNECTIONS }, () => connect(target))
  const txns = clients.map((c) => (c.kv as unknown as { Txn: Txn }).Txn.bind(c.kv))
  let grown = 0
  try {
    let status = await etcdStatus(clients[0])
    let blockBytes = 0
    for (let first = 0; first < keys; first += BLOCK_KEYS) {
      const end = Math.min(keys, first + BLOCK_KEYS)
      // The next block's bytes, guessed from the last one's (the first block is always grown).
      if (first > 0 && status.dbBytes + (blockBytes * (end - first)) / BLOCK_KEYS > maxDbBytes) break
      const before = status.dbBytes
      for (let version = 1; version <= 2; version++) await putAll(first, end, version)
      grown = end
      status = await etcdStatus(clients[0])
      blockBytes = Math.max(blockBytes, status.dbBytes - before)
      onProgress(grown, keys)
    }
    return { keys: grown, revisions: status.revision, dbBytes: status.dbBytes }
  } finally {
    for (const c of clients) c.close()
  }

  /** Version `version` of keys [from, to), in Txns spread over the connections. */
  async function putAll(from: number, to: number, version: number): Promise<void> {
    let next = from
    const lane = async (txn: Txn): Promise<void> => {
      while (next < to) {
        const start = next
        next = Math.min(to, next + ETCD_TXN_PUTS)
        const success: Message[] = []
        for (let i = start; i < next; i++) success.push({ request_put: { key: scaleKey(i), value: valueOf(i, version) } })
        await new Promise<void>((resolve, reject) => txn({ success }, (err) => (err ? reject(err) : resolve())))
      }
    }
    await Promise.all(txns.flatMap((txn) => Array.from({ length: IN_FLIGHT_PER_CONNECTION }, () => lane(txn))))
  }
}
