/**
 * Waiting out backpressure on a response stream: resolves when the stream wants more ('drain') or never
 * will ('close'; 'cancelled' for a gRPC call whose client went away or whose deadline passed), and
 * leaves no listener behind either way. A bare once('drain') waits forever for a client that is gone,
 * holding on to everything the writer had left to send (a snapshot: the whole database).
 */
import type { EventEmitter } from 'node:events'

const EVENTS = ['drain', 'close', 'cancelled'] as const

export function drainedOrGone(stream: EventEmitter): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      for (const event of EVENTS) stream.off(event, done)
      resolve()
    }
    for (const event of EVENTS) stream.on(event, done)
  })
}
