/**
 * A steady, paced write load that allocates next to nothing that outlives a put: W writers take turns, one
 * op every 1/rate s in all (writer w's k-th op is due at t0 + (w + k·W)/rate), each writer with at most one
 * op in flight; an op due while its writer's previous one is still in flight goes as soon as that one is
 * done, its latency still counted from when it was due (bench/lib/pacing.ts).
 *
 * Why not one async loop and one timer per writer: with 200 writers each timer, its promise and the loop's
 * suspended frame live for the writer's whole interval (100 ms at 2,000 ops/s), long enough to survive a
 * young-generation collection, and each sample kept as an object lives to the end. Under bench:compaction
 * that harness garbage was over a third of what reached V8's old generation during a compaction (in a
 * sampling heap profile), and what reaches it sets how soon the next mark-compact stalls the server's
 * writes too. Here one timer at a time drives the schedule and the samples go into typed arrays, a small
 * share of the same profile.
 */
import { pacedLatency, sleepUntil } from './pacing.js'
import { grown } from './grown.js'

/** Scheduled times and latencies (ms), in typed arrays that grow by doubling. */
export class LatencySamples {
  private at: Float64Array
  private ms: Float64Array
  private n = 0

  constructor(capacity = 1 << 16) {
    this.at = new Float64Array(capacity)
    this.ms = new Float64Array(capacity)
  }

  get length(): number {
    return this.n
  }

  add(at: number, ms: number): void {
    if (this.n === this.at.length) {
      this.at = grown(this.at)
      this.ms = grown(this.ms)
    }
    this.at[this.n] = at
    this.ms[this.n++] = ms
  }

  /** Latencies of the ops scheduled in [from, to). */
  between(from: number, to: number): number[] {
    const out: number[] = []
    for (let i = 0; i < this.n; i++) if (this.at[i] >= from && this.at[i] < to) out.push(this.ms[i])
    return out
  }

  /** As objects, for a trace file. */
  toJSON(): Array<{ at: number; ms: number }> {
    return Array.from({ length: this.n }, (_, i) => ({ at: this.at[i], ms: this.ms[i] }))
  }
}

export interface PacedLoad {
  /** Stops issuing; resolves once every op in flight is done (rejects with the first op's failure, if any). */
  stop(): Promise<LatencySamples>
}

/** Starts `writers` writers doing `op(i)` at `rate` ops/s in all; i counts the ops issued. */
export function pacedLoad(writers: number, rate: number, op: (i: number) => Promise<unknown>): PacedLoad {
  const samples = new LatencySamples(Math.max(1 << 16, rate * 64))
  const step = 1000 / rate
  const t0 = performance.now()
  const nextK = new Float64Array(writers)
  const busy = new Uint8Array(writers)
  const dueOf = (w: number, k: number) => t0 + (w + k * writers) * step
  let running = true
  let issuedOps = 0
  let inFlight = 0
  let failure: unknown
  let idle: (() => void) | undefined

  const issue = (w: number, issued: number): void => {
    const at = dueOf(w, nextK[w]++)
    busy[w] = 1
    inFlight++
    op(issuedOps++)
      .then(
        () => {
          samples.add(at, pacedLatency(at, issued, performance.now()))
        },
        (err: unknown) => {
          failure ??= err
          running = false
        },
      )
      .finally(() => {
        busy[w] = 0
        inFlight--
        // Its next op came due while this one was in flight: it goes now.
        if (running && dueOf(w, nextK[w]) <= performance.now()) issue(w, performance.now())
        else if (inFlight === 0) idle?.()
      })
  }

  const dispatcher = (async () => {
    let j = 0
    while (running) {
      const issued = await sleepUntil(t0 + j * step)
      if (!running) break
      // Every op due before the timer can wake again (timers count whole milliseconds): ops may be due
      // more often than that, and one held to the next wake would be up to a millisecond late for the
      // harness's sake. One issued early counts from when it was issued (pacing.ts), as a per-op timer
      // that fired early would.
      do {
        const w = j % writers
        // A writer still busy issues this op itself when its op in flight is done (above); one whose
        // nextK is already past this op has issued it that way.
        if (busy[w] === 0 && nextK[w] <= Math.floor(j / writers)) issue(w, issued)
        j++
      } while (t0 + j * step < issued + 1)
    }
  })()

  return {
    async stop() {
      running = false
      await dispatcher
      if (inFlight > 0) await new Promise<void>((resolve) => (idle = resolve))
      if (failure !== undefined) throw failure
      return samples
    },
  }
}
