/**
 * Workload 3: gRPC Range over 1,000 keys of 256 bytes under one prefix: point gets/s (64 clients) and
 * lists of the whole 1,000-key prefix per second (8 clients), serializable=false (linearizable, etcd's
 * default), closed loop for `seconds` each.
 */
import { fromRuns, rounds, type Figure, type Pair, type Scale } from '../figures.js'
import { rounds as plannedRounds } from '../plan.js'
import { runLoad } from '../generators.js'

const PREFIX = '/bench/range/'

export async function ranges(pair: Pair, scale: Scale): Promise<Figure[]> {
  await plannedRounds(1, (side) =>
    runLoad(
      {
        cmd: 'puts',
        target: pair[side].grpc,
        clients: 50,
        connections: 2,
        durationMs: 600_000,
        count: scale.rangeKeys,
        keyPrefix: PREFIX,
        keys: scale.rangeKeys,
        valueBytes: 256,
      },
      1,
    ),
  )
  const load = (mode: 'point' | 'prefix', clients: number) => (target: string) =>
    runLoad(
      {
        cmd: 'ranges',
        target,
        clients,
        connections: Math.max(1, clients / 16),
        durationMs: scale.seconds * 1000,
        mode,
        prefix: PREFIX,
        keys: scale.rangeKeys,
      },
      scale.generators,
    )
  const point = await rounds(pair, scale, (s) => load('point', 64)(s.grpc))
  const prefix = await rounds(pair, scale, (s) => load('prefix', 8)(s.grpc))
  return [
    fromRuns({ name: 'grpc-range-point-gets-per-sec', unit: 'gets/s', higherIsBetter: true }, point, (t) => t.opsPerSec),
    fromRuns(
      { name: `grpc-range-prefix-${scale.rangeKeys}-lists-per-sec`, unit: 'lists/s', higherIsBetter: true },
      prefix,
      (t) => t.opsPerSec,
    ),
  ]
}
