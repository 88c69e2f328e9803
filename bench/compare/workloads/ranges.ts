/**
 * Workload 3: gRPC Range over 1,000 keys of 256 bytes under one prefix: point gets/s (64 clients) and
 * lists of the whole 1,000-key prefix per second (8 clients), serializable=false (linearizable, etcd's
 * default), closed loop for `seconds` each.
 */
import { bothSides, type Figure, type Pair, type Scale } from '../figures.js'
import { runLoad } from '../generators.js'

const PREFIX = '/bench/range/'

export async function ranges(pair: Pair, scale: Scale): Promise<Figure[]> {
  await bothSides(pair, 'kvlog', (s) =>
    runLoad(
      {
        cmd: 'puts',
        target: s.grpc,
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
  const point = await bothSides(pair, 'etcd', (s) => load('point', 64)(s.grpc))
  const prefix = await bothSides(pair, 'kvlog', (s) => load('prefix', 8)(s.grpc))
  return [
    {
      name: 'grpc-range-point-gets-per-sec',
      kvlog: point.kvlog.opsPerSec,
      etcd: point.etcd.opsPerSec,
      unit: 'gets/s',
      higherIsBetter: true,
    },
    {
      name: `grpc-range-prefix-${scale.rangeKeys}-lists-per-sec`,
      kvlog: prefix.kvlog.opsPerSec,
      etcd: prefix.etcd.opsPerSec,
      unit: 'lists/s',
      higherIsBetter: true,
    },
  ]
}
