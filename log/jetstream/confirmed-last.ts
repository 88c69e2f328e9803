/**
 * The stream's last sequence as a quorum of its servers confirms it now: what a linearizable read waits
 * for (read-barrier.ts).
 *
 * STREAM.INFO is answered from one server's own state: a stream leader cut off from the other servers
 * keeps answering it (nats-server 2.9 until it notices the lost quorum, and a follower cut off answers it
 * too), with a last sequence the others have moved past. A publish is answered only once the stream's
 * replicas agreed on it: this one expects a last sequence the stream never has, so the stream's leader
 * proposes it to the replicas, the fence check runs as it is applied, and the rejection (JetStream error
 * 10071) names the last sequence at that point of the replicated order. Nothing is stored. A server
 * without a quorum never answers it (the caller's timeout), one without the stream's subject answers
 * "no responders".
 *
 * In the protocol as a whole: docs/cluster-protocol.md, "Reads and leases".
 */
import type { JetStreamClient } from 'nats'
import { KvlogError } from '../errors.js'
import { apiErrorCode } from './connection.js'

/** A last sequence no stream reaches, so the fence always rejects the probe. */
const NEVER = Number.MAX_SAFE_INTEGER
const EMPTY = new Uint8Array(0)
/** Between two asks of a stream that did not answer. */
const RETRY_MS = 50

/** One ask: the confirmed last sequence, or the client's error (timeout, no responders). */
export async function confirmedLast(js: JetStreamClient, subject: string): Promise<number> {
  let stored: number
  try {
    stored = (await js.publish(subject, EMPTY, { expect: { lastSequence: NEVER } })).seq
  } catch (err) {
    const description = (err as { api_error?: { description?: string } }).api_error?.description ?? ''
    const last = /wrong last sequence: (\d+)/.exec(description)
    if (apiErrorCode(err) === 10071 && last !== null) return Number(last[1])
    throw err
  }
  throw new KvlogError('INTERNAL', `the stream stored a read barrier at sequence ${stored}`)
}

/**
 * confirmedLast(), asked again while the stream does not answer (its leader moving, a server stopped or
 * cut off), until `timeoutMs`; then UNAVAILABLE.
 */
export async function confirmedLastWithin(ask: () => Promise<number>, timeoutMs: number, closed: () => boolean): Promise<number> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      return await ask()
    } catch (err) {
      if (err instanceof KvlogError || closed() || Date.now() + RETRY_MS >= deadline) {
        if (err instanceof KvlogError) throw err
        throw new KvlogError(
          'UNAVAILABLE',
          `a quorum of the log's stream did not confirm its end within ${timeoutMs} ms (${(err as Error).message}); retry, or read serializable`,
        )
      }
      await new Promise((r) => setTimeout(r, RETRY_MS))
    }
  }
}
