/**
 * Forwarded writes in batches: a follower sends the commands its clients submitted in one turn of the
 * event loop as one request to the leader (`<forward subject>.batch`), and the leader answers them
 * together, one reply per command in order. Each command keeps its own deadline (the milliseconds it may
 * still wait in the leader's queue travel with it) and its own result or error.
 *
 * A lone command, and every command of a batch that reached no leader listening for batches (a leader
 * of an earlier version, or none: "no responders"), goes the single way (`sendOne`: the request per
 * command with its retries). A command the leader refused before publishing it (NOT_APPLIED) is sent
 * again the single way while its deadline allows, as a single one would be.
 */
import { KvlogError } from '../errors.js'
import { decode, encode } from './messages.js'

export interface ForwardReply {
  seq?: number
  error?: { code: string; message: string; details?: Record<string, unknown> }
}

/** What a batch request carries: the commands' bytes and the milliseconds each may still wait. */
interface BatchRequest {
  cmds: Uint8Array[]
  within: number[]
}

interface Waiting {
  bytes: Buffer
  deadline: number
  resolve(): void
  reject(err: unknown): void
}

export interface ForwardBatchHooks {
  /** Sends one batch request and resolves with its reply's bytes (rejects as a NATS request does). */
  request(payload: Uint8Array, timeoutMs: number): Promise<Uint8Array>
  /** The most command bytes one batch request carries (under the NATS server's largest message). */
  maxBytes(): number
  /** The timeout of a request whose commands may wait up to `leftMs`. */
  timeout(leftMs: number): number
  /** Forwards one command the single way (with its retries) until its deadline. */
  sendOne(bytes: Buffer, deadline: number): Promise<void>
  /** The leader refused a command before publishing it (it may no longer lead). */
  refused(): void
  /** One command's forward took `ms` (a batch's round trip, for each of its commands). */
  observe(ms: number): void
}

export class ForwardBatcher {
  private waiting: Waiting[] = []

  constructor(private readonly hooks: ForwardBatchHooks) {}

  /** Resolves once the leader took the command (or may have: the caller waits for it in the log). */
  forward(bytes: Buffer, deadline: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.waiting.push({ bytes, deadline, resolve, reject }) === 1) setImmediate(() => void this.flush())
    })
  }

  /** The turn's commands, in batches of at most maxBytes (a larger command goes alone). */
  private flush(): void {
    const all = this.waiting.splice(0)
    const max = this.hooks.maxBytes()
    for (let i = 0; i < all.length;) {
      let j = i + 1
      let bytes = all[i].bytes.length
      while (j < all.length && bytes + all[j].bytes.length <= max) bytes += all[j++].bytes.length
      void this.send(all.slice(i, j))
      i = j
    }
  }

  private async send(batch: Waiting[]): Promise<void> {
    if (batch.length === 1) return this.single(batch[0])
    const now = Date.now()
    const request: BatchRequest = { cmds: batch.map((w) => w.bytes), within: batch.map((w) => Math.max(1, w.deadline - now)) }
    const started = performance.now()
    let replies: ForwardReply[]
    try {
      const data = await this.hooks.request(encode(request), this.hooks.timeout(Math.max(...request.within)))
      replies = decode<{ replies: ForwardReply[] }>(data).replies
    } catch (err) {
      // OUTCOME_UNKNOWN: the leader changed while the batch was forwarded to it (untilLeaderChange).
      if (err instanceof KvlogError) for (const w of batch) w.reject(err)
      // 503 no responders: no leader takes batches on this subject; the request went nowhere.
      else if ((err as { code?: string }).code === '503') for (const w of batch) void this.single(w)
      // Anything else (timeout) may have been delivered: the callers wait for their commands in the log.
      else for (const w of batch) w.resolve()
      return
    }
    const ms = performance.now() - started
    batch.forEach((w, i) => {
      this.hooks.observe(ms)
      const reply = replies[i] ?? { error: { code: 'INTERNAL', message: 'the leader answered fewer commands than it was sent' } }
      if (reply.error === undefined) return w.resolve()
      if (reply.error.code === 'NOT_APPLIED' && Date.now() < w.deadline) {
        this.hooks.refused()
        return void this.single(w)
      }
      w.reject(new KvlogError(reply.error.code as never, reply.error.message, reply.error.details))
    })
  }

  private async single(w: Waiting): Promise<void> {
    await this.hooks.sendOne(w.bytes, w.deadline).then(w.resolve, w.reject)
  }
}

/** The leader's side: every command of a batch request served by `serveOne`, the replies in order. */
export async function serveBatch(
  data: Uint8Array,
  serveOne: (cmd: Uint8Array, deadline: number) => Promise<ForwardReply>,
): Promise<Uint8Array> {
  const now = Date.now()
  const request = decode<BatchRequest>(data)
  const replies = await Promise.all(request.cmds.map((cmd, i) => serveOne(cmd, now + Math.max(1, request.within[i] ?? 1))))
  return encode({ replies })
}
