/**
 * Workload 2: durable gRPC puts (256-byte values over 10,000 keys) with 1, 64 and 1,000 concurrent
 * clients, closed loop, for `seconds` each: puts/s and p50/p99 latency. The clients are spread over
 * `generators` forked processes and over connections (1 per 32 clients, at least 1).
 * Also kvlog's native HTTP API (PUT /v1/kv, keep-alive) with the same clients, against etcd's gRPC figure:
 * one connection per client there, since an HTTP/1.1 connection carries one request at a time (HTTP/2
 * multiplexes a gRPC connection's calls).
 */
import { fromRuns, repeat, rounds, type Figure, type Pair, type Scale } from '../figures.js'
import { runLoad, type Throughput } from '../generators.js'
import type { PutsCommand } from '../load-worker.js'
import type { Runs } from '../plan.js'

const KEYS = 10_000
const VALUE_BYTES = 256

function command(target: string, clients: number, scale: Scale, cmd: PutsCommand['cmd'] = 'puts'): PutsCommand {
  return {
    cmd,
    target,
    clients,
    connections: cmd === 'http-puts' ? clients : Math.max(1, Math.ceil(clients / 32)),
    durationMs: scale.seconds * 1000,
    keyPrefix: '/bench/put/',
    keys: KEYS,
    valueBytes: VALUE_BYTES,
  }
}

function figures(name: string, clients: number, r: Runs<Throughput>, note?: string): Figure[] {
  const f = (suffix: string, unit: string, higherIsBetter: boolean, value: (t: Throughput) => number) =>
    fromRuns({ name: `${name}-${clients}-${suffix}`, unit, higherIsBetter, note }, r, value)
  return [
    f('puts-per-sec', 'puts/s', true, (t) => t.opsPerSec),
    f('p50-ms', 'ms', false, (t) => t.p50),
    f('p99-ms', 'ms', false, (t) => t.p99),
  ]
}

export async function puts(pair: Pair, scale: Scale): Promise<Figure[]> {
  const out: Figure[] = []
  const etcdByClients = new Map<number, Throughput[]>()
  for (const clients of scale.putClients) {
    const r = await rounds(pair, scale, (s) => runLoad(command(s.grpc, clients, scale), scale.generators))
    etcdByClients.set(clients, r.etcd)
    out.push(...figures('grpc-put', clients, r))
  }
  for (const clients of scale.putClients) {
    const native = await repeat(scale, () => runLoad(command(pair.kvlog.http!, clients, scale, 'http-puts'), scale.generators))
    out.push(...figures('native-http-put', clients, { kvlog: native, etcd: etcdByClients.get(clients)! }, 'kvlog native HTTP vs etcd gRPC'))
  }
  return out
}
