/**
 * The gRPC Watch stream's send queue, where a backed-up stream's responses coalesce.
 *
 * grpc-js writes one response per round trip through its writable buffer and the HTTP/2 stream, so a
 * stream carrying many watches (an apiserver's, or 20 watchers of a fan-out) can be handed responses much
 * faster than it writes them. The outbox keeps at most `inflight` responses in grpc-js and queues the
 * rest here. While a watch's events response waits in the queue, the events of the next batches for that
 * watch join it (protobuf messages concatenate: one head, then the events fields of every batch), so a
 * backed-up stream sends fewer, larger responses instead of falling further behind. An idle stream sends
 * each response at once, as before.
 *
 *   queue:  [created 3] [events 1: r7 r8 r9 …] [progress -1] [events 2: r8 r9 …]
 *                            ▲ open for watch 1                    ▲ open for watch 2
 *           pump ──▶ ≤ inflight responses handed to grpc-js ──▶ HTTP/2
 *
 * Order: per watch, responses leave in the order they were queued (any other response for a watch closes
 * its open events response, so later events go after it). A stream-wide response (watch_id -1, e.g. the
 * answer to a progress request: "every event up to R was sent") closes every open one, so nothing queued
 * after it is sent before it. A coalesced response holds whole batches, hence whole revisions, and stops
 * growing at maxResponseBytes.
 *
 * Flow control: queued() is false once more than maxMessages responses or maxBytes bytes wait; the watch
 * stream then pauses its watches (they catch up from the log later, nothing is dropped), and `drained` is
 * called when the queue is back under half of both.
 */

export interface OutboxOptions {
  /** Responses handed to grpc-js and not yet written. */
  inflight: number
  maxMessages: number
  maxBytes: number
  /** A coalesced response stops taking batches at this size. */
  maxResponseBytes: number
}

interface Queued {
  /** undefined: stream-wide. */
  id: number | undefined
  /** A finished response, or the events fields of an open one (built with its head when it leaves). */
  parts: Buffer[]
  bytes: number
  /** Events responses: the revision of their last batch; -1 for finished responses. */
  revision: number
}

export class WatchOutbox {
  private queue: Queued[] = []
  private head = 0
  private bytes = 0
  private inflight = 0
  private readonly open = new Map<number, Queued>()
  private backedUp = false
  private pumping = false
  private closed = false

  constructor(
    private readonly options: OutboxOptions,
    /** Hands a response (its parts, in order) to the transport; `written` once it is out of its buffer. */
    private readonly write: (response: Buffer[], written: () => void) => void,
    /** The head (header at `revision` + watch_id) of an events response for `id`. */
    private readonly eventsHead: (id: number, revision: number) => Buffer,
    private readonly drained: () => void,
  ) {}

  get queuedMessages(): number {
    return this.queue.length - this.head
  }

  /** A finished response for watch `id`, or stream-wide (undefined). False when the stream is backed up. */
  response(id: number | undefined, response: Buffer): boolean {
    if (id === undefined) this.open.clear()
    else this.open.delete(id)
    this.enqueue({ id, parts: [response], bytes: response.length, revision: -1 })
    return this.pump()
  }

  /** Events of one batch (up to `revision`) for watch `id`, as WatchResponse fields. */
  events(id: number, revision: number, fields: Buffer): boolean {
    const open = this.open.get(id)
    if (open !== undefined && open.bytes + fields.length <= this.options.maxResponseBytes) {
      open.parts.push(fields)
      open.bytes += fields.length
      open.revision = revision
      this.bytes += fields.length
    } else {
      const queued: Queued = { id, parts: [fields], bytes: fields.length, revision }
      this.open.set(id, queued)
      this.enqueue(queued)
    }
    return this.pump()
  }

  /** Drops everything queued (the call is gone). */
  close(): void {
    this.closed = true
    this.queue = []
    this.head = 0
    this.open.clear()
    this.bytes = 0
  }

  private enqueue(queued: Queued): void {
    this.queue.push(queued)
    this.bytes += queued.bytes
  }

  /** Hands responses to the transport while it has room; returns false when the queue is over its limits. */
  private pump(): boolean {
    if (!this.pumping && !this.closed) {
      this.pumping = true
      try {
        while (this.inflight < this.options.inflight && this.head < this.queue.length) this.send(this.take())
      } finally {
        this.pumping = false
      }
    }
    const { maxMessages, maxBytes } = this.options
    if (this.queuedMessages > maxMessages || this.bytes > maxBytes) {
      this.backedUp = true
      return false
    }
    if (this.backedUp && this.queuedMessages <= maxMessages / 2 && this.bytes <= maxBytes / 2) {
      this.backedUp = false
      this.drained()
    }
    return true
  }

  private take(): Queued {
    const queued = this.queue[this.head]
    this.queue[this.head++] = undefined as unknown as Queued
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head)
      this.head = 0
    }
    this.bytes -= queued.bytes
    if (queued.id !== undefined && this.open.get(queued.id) === queued) this.open.delete(queued.id)
    return queued
  }

  private send(queued: Queued): void {
    const response = queued.revision < 0 ? queued.parts : [this.eventsHead(queued.id!, queued.revision), ...queued.parts]
    this.inflight++
    this.write(response, () => {
      this.inflight--
      this.pump()
    })
  }
}
