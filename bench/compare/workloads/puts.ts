/**
 * Workload 2: durable gRPC puts (256-byte values over 10,000 keys) with 1, 64 and 1,000 concurrent
 * clients, closed loop, for `seconds` each: puts/s and p50/p99 latency. The clients are spread over
 * `generators` forked processes and over connections (1 per 32 clients, at least 1).
 * Also kvlog's native HTTP API (PUT /v1/kv, keep-alive) with the same clients, against etcd's gRPC figure:
 * one connection per client there, since an HTTP/1.1 connection carries one request at a time (HTTP/2
 * multiplexes a gRPC connection's calls).
 */
import { bothSides, type Figure, type Pair, type Scale } from '../figures.js'
import { runLoad, type Throughput } from '../generators.js'
import type { PutsCommand } from '../load-worker.js'

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

function figures(name: string, clients: number, r: { kvlog: Throughput; etcd: Throughput }): Figure[] {
  return [
    { name: `${name}-${clients}-puts-per-sec`, kvlog: r.kvlog.opsPerSec, etcd: r.etcd.opsPerSec, unit: 'puts/s', higherIsBetter: true },
    { name: `${name}-${clients}-p50-ms`, kvlog: r.kvlog.p50, etcd: r.etcd.p50, unit: 'ms', higherIsBetter: false },
    { name: `${name}-${clients}-p99-ms`, kvlog: r.kvlog.p99, etcd: r.etcd.p99, unit: 'ms', higherIsBetter: false },
  ]
}

export async function puts(pair: Pair, scale: Scale): Promise<Figure[]> {
  const out: Figure[] = []
  const etcdByClients = new Map<number, Throughput>()
  for (const [i, clients] of scale.putClients.entries()) {
    const r = await bothSides(pair, i % 2 === 0 ? 'kvlog' : 'etcd', (s) => runLoad(command(s.grpc, clients, scale), scale.generators))
    etcdByClients.set(clients, r.etcd)
    out.push(...figures('grpc-put', clients, r))
  }
  for (const clients of scale.putClients) {
    const native = await runLoad(command(pair.kvlog.http!, clients, scale, 'http-puts'), scale.generators)
    const f = figures('native-http-put', clients, { kvlog: native, etcd: etcdByClients.get(clients)! })
    for (const x of f) x.note = 'kvlog native HTTP vs etcd gRPC'
    out.push(...f)
  }
  return out
}
