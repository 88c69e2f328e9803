import { KvlogError } from '../errors.js'
import { within } from '../within.js'

/**
 * Linearizable reads at the cost of one look-up per round, not per read: a read waits until this member
 * has applied the stream's last sequence as asked AFTER the read arrived (a look-up already in flight may
 * predate a write acknowledged before the read, so a read never joins one). All reads that arrive while a
 * look-up is in flight share the next one. The look-up is confirmed by a quorum (confirmed-last.ts). A read
 * waits `timeoutMs` at most from its arrival, whatever round it joined; then UNAVAILABLE.
 *
 * In the protocol as a whole: docs/cluster-protocol.md, "Reads and leases".
 */
export class ReadBarrier {
  private inflight: Promise<number> | undefined
  private next: Promise<number> | undefined

  constructor(
    private readonly lookUp: () => Promise<number>,
    private readonly waitApplied: (seq: number) => Promise<void>,
    private readonly timeoutMs: number,
  ) {}

  wait(): Promise<void> {
    return within(
      this.round().then((seq) => this.waitApplied(seq)),
      this.timeoutMs,
      () =>
        new KvlogError(
          'UNAVAILABLE',
          `no confirmed end of the log was applied here within ${this.timeoutMs} ms; retry, or read serializable`,
        ),
    )
  }

  private round(): Promise<number> {
    if (this.inflight === undefined) return this.start()
    // One round is in flight: join (or open) the one after it.
    this.next ??= this.inflight
      .catch(() => 0)
      .then(() => {
        this.next = undefined
        return this.start()
      })
    return this.next
  }

  private start(): Promise<number> {
    const p = this.lookUp()
    this.inflight = p
    const clear = () => {
      if (this.inflight === p) this.inflight = undefined
    }
    p.then(clear, clear)
    return p
  }
}
