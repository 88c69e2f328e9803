/**
 * Workload 9, server CPU per operation at a fixed offered load: the CPU seconds (user + system, from
 * /proc/<pid>/stat, every thread of the process: for kvlog its main thread, LevelDB's threads and libuv's
 * pool, fsync's kernel time included) the server process spends over the load, divided by the operations
 * done. Both systems get the same offered load, so the figure compares the cost of the same work, not how
 * fast each can go (a saturated server's CPU is bounded by the machine):
 * - durable puts paced at `cpuPutRate` puts/s (256-byte values over 10,000 keys, 256 clients over 8
 *   connections, latency from each put's scheduled time), µs of server CPU per put;
 * - `watchers` gRPC watchers on one prefix (workload 4's setup) while a writer commits `cpuWatchRate`
 *   revisions/s: µs of server CPU per delivered event, the writer's puts included (the same for both).
 * Medians of `rounds` runs, alternating which system goes first. A system that did not reach 90% of the
 * offered rate was saturated, and its figure is not at the fixed load (larger write groups cost less per
 * put): the note says so.
 */
import { fromRuns, medianOf, rounds, type Figure, type Pair, type Scale } from '../figures.js'
import type { Runs } from '../plan.js'
import { runLoad } from '../generators.js'
import type { System } from '../systems.js'
import { grpcFanOut } from './watch.js'

interface PerOp {
  cpuUs: number
  /** What the system achieved of the offered load, per second. */
  achieved: number
}

async function perPut(system: System, scale: Scale): Promise<PerOp> {
  const before = await system.cpuSeconds()
  const r = await runLoad(
    {
      cmd: 'puts',
      target: system.grpc,
      clients: 256,
      connections: 8,
      durationMs: scale.seconds * 1000,
      rate: scale.cpuPutRate,
      keyPrefix: '/bench/cpu/',
      keys: 10_000,
      valueBytes: 256,
    },
    scale.generators,
  )
  const cpu = (await system.cpuSeconds()) - before
  return { cpuUs: (cpu * 1e6) / Math.max(1, r.ops), achieved: r.opsPerSec }
}

async function perDelivery(system: System, scale: Scale): Promise<PerOp> {
  const r = await grpcFanOut(system, scale, scale.cpuWatchRate)
  return { cpuUs: (r.serverCpuSeconds * 1e6) / Math.max(1, r.deliveries), achieved: r.deliveriesPerSec }
}

/** Below this share of the offered rate a system was saturated: its CPU per operation is not at the fixed load. */
const SATURATED = 0.9

function figure(name: string, unit: string, runs: Runs<PerOp>, offered: string, rate: number): Figure {
  const achieved = (side: 'kvlog' | 'etcd') => medianOf(runs, side, (x) => x.achieved)
  const saturated = (['kvlog', 'etcd'] as const).filter((side) => achieved(side) < SATURATED * rate)
  return fromRuns(
    {
      name,
      unit,
      higherIsBetter: false,
      note:
        `${offered}; achieved ${Math.round(achieved('kvlog'))} / ${Math.round(achieved('etcd'))}/s` +
        (saturated.length > 0 ? ` (saturated: ${saturated.join(', ')})` : ''),
    },
    runs,
    (x) => x.cpuUs,
  )
}

export async function cpu(pair: Pair, scale: Scale): Promise<Figure[]> {
  const puts = await rounds(pair, scale, (s) => perPut(s, scale))
  const deliveries = await rounds(pair, scale, (s) => perDelivery(s, scale))
  return [
    figure(`cpu-put-${scale.cpuPutRate}rps-us-per-put`, 'µs CPU/put', puts, `${scale.cpuPutRate} puts/s offered`, scale.cpuPutRate),
    figure(
      `cpu-watch-${scale.watchers}w-${scale.cpuWatchRate}rps-us-per-event`,
      'µs CPU/event',
      deliveries,
      `${scale.cpuWatchRate} rev/s to ${scale.watchers} watchers`,
      scale.cpuWatchRate * scale.watchers,
    ),
  ]
}
