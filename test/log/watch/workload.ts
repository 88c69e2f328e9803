/**
 * Random workloads for the watch race tests: writes of every kind (puts, deletes, range deletes,
 * multi-key transactions, no-op deletes) over a small keyspace, and random watch specs over it.
 */
import type { Log } from '../../../log/backend.js'
import { prefixEnd } from '../../../log/keys.js'
import type { WatchSpec } from '../../../log/watch/types.js'
import { ZERO } from './helpers.js'

const KEYS = ['a/0', 'a/1', 'a/2', 'a/10', 'b/0', 'b/1', 'b/x/0', 'b/x/1', 'c', 'c/0']

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)]
}

export function randomWrite(log: Log, rand: () => number, tag: string): Promise<unknown> {
  const r = rand()
  if (r < 0.55) return log.put(pick(rand, KEYS), `${tag}`)
  if (r < 0.7) return log.delete(pick(rand, KEYS))
  if (r < 0.78) {
    const p = pick(rand, ['a/', 'b/', 'b/x/'])
    return log.delete(p, { rangeEnd: prefixEnd(p) })
  }
  // A transaction over distinct keys: one revision, several events.
  const keys = [...new Set(Array.from({ length: 2 + Math.floor(rand() * 3) }, () => pick(rand, KEYS)))]
  return log.txn({
    success: keys.map((key, i) =>
      i === 0 && rand() < 0.3 ? { type: 'delete' as const, key } : { type: 'put' as const, key, value: `${tag}.${i}` },
    ),
  })
}

export function randomSpec(rand: () => number, startRevision: number): WatchSpec {
  const shape = rand()
  let spec: WatchSpec
  if (shape < 0.3) spec = { key: pick(rand, KEYS) }
  else if (shape < 0.6) {
    const p = pick(rand, ['a/', 'b/', 'b/x/', 'c'])
    spec = { key: p, rangeEnd: prefixEnd(p) }
  } else if (shape < 0.75) spec = { key: 'a/1', rangeEnd: 'b/x' }
  else if (shape < 0.85) spec = { key: 'b/', rangeEnd: ZERO }
  else spec = { key: ZERO, rangeEnd: ZERO }
  const f = rand()
  return {
    ...spec,
    startRevision,
    prevKv: rand() < 0.5,
    ...(f < 0.15 ? { filters: { noPut: true } } : f < 0.3 ? { filters: { noDelete: true } } : {}),
  }
}
