/**
 * Tail refill, run by a new leader before it accepts writes (tail.ts says why): ask the members for
 * their durable position; if any holds messages past the stream's last sequence, republish them from the
 * copy of the one furthest ahead (and on from the next one ahead, when that one does not keep them, does
 * not answer or holds another history), in order, byte for byte, each fenced on the sequence before it (so it
 * lands exactly at its old sequence or not at all) and with an id derived from its sequence and hash (a
 * retry, by this leader or the next, is deduplicated). Members that applied them compare the bytes.
 *
 * A majority of the roster must answer: every acknowledged write is durable on a majority, so any
 * majority includes a member that holds it. What cannot be republished (older than the kept tail, or not
 * following the stream's history) stops the takeover with a message: writing on would fork the history.
 *
 * A member may also hold messages no majority has (published, applied by it, never acknowledged). The
 * survey waits for every member it can reach (durability.ts), so those come back too when it answers;
 * one that cannot answer within clusterRequestTimeout and comes back later finds the stream went on without
 * them, and stops with a message instead of following a different history.
 *
 * In the protocol as a whole: docs/cluster-protocol.md, "Takeover and tail refill".
 */
import type { JetStreamClient, JetStreamManager } from 'nats'
import { apiErrorCode } from './connection.js'
import type { Durability } from './durability.js'
import { decodeMessage, messageHash } from './messages.js'
import type { ClusterNames } from './options.js'
import { checkChain, type KeptMessage, type TailStore } from './tail.js'

export interface RefillContext {
  js: JetStreamClient
  jsm: JetStreamManager
  names: ClusterNames
  durability: Durability
  tail: TailStore
  timeoutMs: number
  publishTimeoutMs: number
  /** Members known to have no NATS connection: the survey does not wait for them. */
  absent: ReadonlySet<string>
  say(line: string): void
  /** Whether this member still leads in the epoch that started the refill. */
  leading(): boolean
}

const PUBLISH_RETRIES = 5

/** Returns the stream's last sequence after the refill (`last` when nothing was missing). */
export async function refillTail(ctx: RefillContext, last: number): Promise<number> {
  const positions = await ctx.durability.survey(ctx.timeoutMs, ctx.absent, last)
  if (!positions.some((p) => p.seq > last)) return last
  // Asked again after the survey: a deposed leader may have published since (then the fence stops us).
  last = Math.max(last, (await ctx.jsm.streams.info(ctx.names.stream)).state.last_seq)
  const ahead = positions.filter((p) => p.seq > last).sort((a, b) => b.seq - a.seq)
  if (ahead.length === 0) return last
  ctx.say(
    `kvlog: the stream ends at sequence ${last} but ${ahead[0].name} holds messages up to ${ahead[0].seq} durably ` +
      '(the stream lost its tail): republishing them before accepting writes',
  )
  const self = positions[0].name
  const from = last
  let seq = last
  // A stream that lost every message has no first message to follow: the kept chain starts it afresh.
  let prevHash = last === 0 ? undefined : await hashAt(ctx, last)
  // Furthest ahead first; one that does not keep the messages, does not answer, or holds another history
  // is not the only hope: the next member ahead goes on from where the last one stopped.
  const failures: Error[] = []
  const sources: string[] = []
  for (const source of ahead) {
    if (source.seq <= seq) continue
    try {
      while (seq < source.seq) {
        if (!ctx.leading()) throw new Error('stopped leading while republishing the lost tail')
        const kept =
          source.name === self
            ? await ctx.tail.range(seq + 1, source.seq, 256 * 1024)
            : await ctx.durability.fetch(source.name, seq + 1, source.seq, ctx.timeoutMs)
        if (kept.length === 0 || kept[0].seq !== seq + 1) {
          throw new Error(
            `the stream lost messages ${seq + 1}..${source.seq}, which ${source.name} applied, but no longer keeps message ${seq + 1} ` +
              `(members keep the last tailMessages messages): the lost tail cannot be republished; restore the stream from a backup`,
          )
        }
        checkChain(seq, prevHash, kept, (data) => decodeMessage(data).prev)
        for (const k of kept) await republish(ctx, k)
        seq = kept[kept.length - 1].seq
        prevHash = messageHash(kept[kept.length - 1].data)
      }
      sources.push(source.name)
    } catch (err) {
      // The fence (another writer) or the end of this leadership ends the refill, whoever the source.
      if (apiErrorCode(err) === 10071 || !ctx.leading()) throw err
      failures.push(err as Error)
      if (seq > from) sources.push(source.name)
      ctx.say(`kvlog: could not republish the lost tail from ${source.name}'s copy: ${(err as Error).message}`)
    }
  }
  if (seq === from) throw failures[0]
  ctx.say(`kvlog: republished stream messages ${from + 1}..${seq} from ${sources.map((n) => `${n}'s copy`).join(', ')}`)
  return seq
}

/** The hash of message `seq` (what the next message's `prev` must be): kept here, in the stream, or by a peer. */
async function hashAt(ctx: RefillContext, seq: number): Promise<string> {
  const kept = await ctx.tail.get(seq)
  if (kept !== undefined) return messageHash(kept)
  const stored = await ctx.jsm.streams.getMessage(ctx.names.stream, { seq }).catch(() => undefined)
  if (stored !== undefined) return messageHash(stored.data)
  const { kept: peer } = await ctx.durability.fetchFromPeers(seq, seq, ctx.timeoutMs)
  if (peer.length === 1) return messageHash(peer[0].data)
  throw new Error(`message ${seq} is neither in the stream nor kept by any member: the lost tail cannot be placed after it`)
}

async function republish(ctx: RefillContext, k: KeptMessage): Promise<void> {
  const msgID = `kvlog-refill.${k.seq}.${messageHash(k.data)}`
  for (let attempt = 1; ; attempt++) {
    try {
      const ack = await ctx.js.publish(ctx.names.subject, k.data, {
        msgID,
        expect: { lastSequence: k.seq - 1 },
        timeout: ctx.publishTimeoutMs,
      })
      if (ack.seq !== k.seq) throw new Error(`republished message ${k.seq} landed at sequence ${ack.seq}`)
      return
    } catch (err) {
      // 10071: the stream moved on (another writer): this member must not write on.
      if (apiErrorCode(err) === 10071 || attempt >= PUBLISH_RETRIES || !ctx.leading()) throw err
      await new Promise((r) => setTimeout(r, 100 * attempt))
    }
  }
}
