/**
 * What a traffic profile runs with: its recording clients (one connection each, spread over the target's
 * endpoints), where recorded watches go, when to stop, a seeded random source, and unique values.
 */
import type { WatchStream } from '../watch/check.js'
import type { RecordingClient } from './client.js'

export interface TrafficContext {
  clients: RecordingClient[]
  watches: WatchStream[]
  /** True once the run's time is up. */
  done(): boolean
  random(): number
  /** A value no other write of the run uses (so a write can be told apart by what it wrote). */
  value(client: number): string
}

export interface Profile {
  name: string
  /** Runs until ctx.done(). */
  run(ctx: TrafficContext): Promise<void>
}

export function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!
}

/** Sleeps between `min` and `max` ms. */
export function pause(random: () => number, min: number, max: number): Promise<void> {
  return new Promise((r) => setTimeout(r, min + random() * (max - min)))
}

/** Runs `body` for every client until done, a short pause after each round (fair to a shared machine). */
export async function eachClient(
  ctx: TrafficContext,
  clients: RecordingClient[],
  body: (c: RecordingClient) => Promise<void>,
): Promise<void> {
  await Promise.all(
    clients.map(async (c) => {
      while (!ctx.done()) {
        await body(c)
        // While the server is away, wait for it instead of piling up failures.
        await (c.failing ? pause(ctx.random, 50, 100) : pause(ctx.random, 1, 5))
      }
    }),
  )
}
