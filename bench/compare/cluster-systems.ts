/**
 * The two three-member clusters of `npm run bench:cluster`, on loopback with durable writes:
 *
 * - etcd: three Debian etcd 3.4 processes (fsync on, as etcd always does) with peer URLs and one
 *   initial cluster;
 * - kvlog: three nats-servers (one R3 JetStream stream; test/support/nats-cluster.ts) and three `kvlog
 *   serve --nats-url ... --fsync always` members.
 *
 * Each member is a System (systems.ts): started, stopped and restarted on its data dir the same way for
 * both. `grpc` is every member's client address, comma separated: the load generators spread their
 * connections over it (generators.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startNatsCluster, type NatsCluster } from '../../test/support/nats-cluster.js'
import { call, connect } from './grpc.js'
import { freePort } from '../../test/support/free-port.js'
import { startEtcdMember, startKvlog, type System, type SystemName } from './systems.js'

export interface ClusterSystem {
  name: SystemName
  members: System[]
  /** Every member's gRPC address, comma separated. */
  grpc: string
  /** The index of the member that leads now (asks the members). */
  leader(): Promise<number>
  destroy(): Promise<void>
}

export async function startEtcdCluster(size = 3): Promise<ClusterSystem> {
  const root = await mkdtemp(join(tmpdir(), 'bench-etcd-cluster-'))
  const ports: Array<{ client: number; peer: number }> = []
  for (let i = 0; i < size; i++) ports.push({ client: await freePort(), peer: await freePort() })
  const initial = ports.map((p, i) => `e${i}=http://127.0.0.1:${p.peer}`).join(',')
  // The members need each other to elect a leader: start them together.
  const members = await Promise.all(
    ports.map((p, i) => startEtcdMember(`e${i}`, join(root, `e${i}`), join(root, `e${i}`), p.client, p.peer, initial)),
  )
  return {
    name: 'etcd',
    members,
    grpc: members.map((m) => m.grpc).join(','),
    leader: async () => {
      // Maintenance.Status answers the leader's member id and, in its header, the asked member's own id.
      const ids: string[] = []
      let leader = ''
      for (const m of members) {
        const client = connect(m.grpc)
        try {
          const s = await call(client.maintenance.Status.bind(client.maintenance), {})
          ids.push(String((s.header as { member_id: unknown }).member_id))
          leader = String(s.leader)
        } catch {
          ids.push('')
        } finally {
          client.close()
        }
      }
      const at = ids.indexOf(leader)
      if (at < 0) throw new Error('etcd: no member leads')
      return at
    },
    destroy: async () => {
      for (const m of members) await m.destroy()
      await rm(root, { recursive: true, force: true })
    },
  }
}

/** `bin`: another build's bin/kvlog (a baseline checkout, for before/after in the same run). */
export async function startKvlogCluster(size = 3, bin?: string): Promise<ClusterSystem & { nats: NatsCluster }> {
  const nats = await startNatsCluster(3)
  const members: System[] = []
  try {
    // One at a time: the first creates the stream, the others join it.
    for (let i = 0; i < size; i++) {
      members.push(await startKvlog(['--nats-url', nats.urls, '--cluster-name', 'bench', '--member-name', `m${i}`], bin))
    }
  } catch (err) {
    for (const m of members) await m.destroy()
    await nats.stop()
    throw err
  }
  return {
    name: 'kvlog',
    members,
    nats,
    grpc: members.map((m) => m.grpc).join(','),
    leader: async () => {
      for (const m of members) {
        try {
          const res = await fetch(`${m.http!}/v1/status`, { signal: AbortSignal.timeout(5000) })
          const name = ((await res.json()) as { cluster?: { leader?: string } }).cluster?.leader
          const at = name === undefined ? -1 : Number(/^m(\d+)$/.exec(name)?.[1] ?? -1)
          if (at >= 0) return at
        } catch {
          // ask the next one
        }
      }
      throw new Error('kvlog: no member leads')
    },
    destroy: async () => {
      for (const m of members) await m.destroy()
      await nats.stop()
    },
  }
}
