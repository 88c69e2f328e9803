/**
 * The kept tail: every member keeps the last `clusterTailMessages` stream messages it applied, byte for byte, in
 * its local copy, written in the same LevelDB batch as the message's effects (a ring of meta records,
 * slot = sequence mod size, each holding its sequence). Two uses:
 *
 * - Tail refill. nats-server 2.9 acknowledges a publish before it is fsynced; a correlated power loss of
 *   the nats-servers can leave the stream shorter than what kvlog acknowledged. kvlog acknowledges a write
 *   only once a majority of its members hold it durably (durability.ts), so a new leader, before it accepts
 *   writes, asks the members for their durable position and republishes what the stream lost from the
 *   copy of the member that is furthest ahead: the same bytes, at the same sequences, fenced. Members
 *   that already applied them check that the bytes are the ones they applied.
 * - Holes: messages deleted from the stream (or lost in the middle) are fetched from a peer's tail.
 *
 * Messages older than the ring cannot be republished: a member whose copy is ahead of the stream by more
 * than that stops with a message instead of following a different history.
 *
 * In the protocol as a whole: docs/cluster-protocol.md, "Records in each copy".
 */
import type { Replica } from '../replica.js'
import { messageHash } from './messages.js'
import { TAIL_SLOT } from './records.js'

export interface KeptMessage {
  seq: number
  data: Uint8Array
}

export class TailStore {
  constructor(
    private readonly view: Replica,
    readonly size: number,
  ) {}

  /** The meta record that keeps message `seq` (written with the message's effects). */
  record(seq: number, data: Uint8Array): { name: string; value: KeptMessage } {
    return { name: TAIL_SLOT + String(seq % this.size), value: { seq, data } }
  }

  /** The kept bytes of message `seq`, or undefined when the ring no longer (or never) held it. */
  async get(seq: number): Promise<Uint8Array | undefined> {
    if (seq < 1 || this.size < 1) return undefined
    const kept = (await this.view.readMeta(TAIL_SLOT + String(seq % this.size))) as KeptMessage | undefined
    return kept?.seq === seq ? kept.data : undefined
  }

  /** Messages from..to in order, stopping at the first one not kept or past about `maxBytes` (at least one). */
  async range(from: number, to: number, maxBytes: number): Promise<KeptMessage[]> {
    const out: KeptMessage[] = []
    let bytes = 0
    for (let seq = from; seq <= to; seq++) {
      const data = await this.get(seq)
      if (data === undefined || (out.length > 0 && bytes + data.length > maxBytes)) break
      out.push({ seq, data })
      bytes += data.length
    }
    return out
  }
}

/**
 * Checks that `messages` continue, in order and without a gap, the history whose message `after` has
 * hash `prevHash`: each message's `prev` is the hash of the one before it. Throws otherwise.
 */
export function checkChain(
  after: number,
  /** undefined: the first message may follow anything (it starts the stream). */
  prevHash: string | undefined,
  messages: KeptMessage[],
  prevOf: (data: Uint8Array) => string,
): void {
  let seq = after
  let hash = prevHash
  for (const m of messages) {
    if (m.seq !== seq + 1) throw new Error(`kept message ${m.seq} does not follow ${seq}`)
    const prev = prevOf(m.data)
    if (hash !== undefined && prev !== hash) throw new Error(`kept message ${m.seq} follows ${prev || 'nothing'}, not ${hash || 'nothing'}`)
    seq = m.seq
    hash = messageHash(m.data)
  }
}
