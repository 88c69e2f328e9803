/**
 * Open-loop pacing for the paced loads (bench:compaction's writers, bench:compare's --rate): each op has a
 * scheduled time, and its latency counts from then, so a stall counts for every op it delays (no
 * coordinated omission).
 *
 * Node's timers count whole milliseconds from a loop time read at the start of the tick, so a timer can
 * fire up to ~1 ms before the time asked for. An op issued that early must not be credited with the time
 * before it was issued: measured from its schedule alone, many of bench:compaction's baseline puts
 * came out negative and its p50 read below what one fdatasync takes.
 */

/** Sleeps until `at` (on the clock `now`), as well as a timer can; returns when the op is issued. */
export async function sleepUntil(at: number, now: () => number = () => performance.now()): Promise<number> {
  const wait = at - now()
  if (wait > 0) await new Promise((r) => setTimeout(r, wait))
  return now()
}

/**
 * The latency of an op scheduled at `at`, issued at `issued` and done at `done`: from its schedule when it
 * was issued late (the delay is the system's), from its issue when the timer fired early.
 */
export function pacedLatency(at: number, issued: number, done: number): number {
  return done - Math.min(at, issued)
}
