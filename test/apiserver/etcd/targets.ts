/**
 * The servers the etcd compatibility suites run against: a real etcd 3.4 (Debian's) and kvlog's etcd v3
 * gRPC door. Every suite is written as `for (const target of targets)`, so each assertion runs on both,
 * and etcd's answers are the reference for kvlog's.
 */
import { startEtcd } from '../../support/etcd-process.js'
import { startServerProcess } from '../../support/server-process.js'

export interface Started {
  /** host:port of the gRPC endpoint (what etcdctl --endpoints and gRPC clients take). */
  endpoint: string
  stop(): Promise<void>
}

export interface Target {
  name: 'etcd' | 'kvlog'
  /** Starts a fresh, empty store (revision 1) on a free loopback port. */
  start(): Promise<Started>
}

export const etcdTarget: Target = {
  name: 'etcd',
  async start() {
    const etcd = await startEtcd()
    return { endpoint: etcd.endpoint, stop: etcd.stop }
  },
}

export const kvlogTarget: Target = {
  name: 'kvlog',
  async start() {
    const server = await startServerProcess() // with --listen-grpc 127.0.0.1:0
    if (server.grpc === '' || server.grpc === undefined) {
      await server.cleanup()
      throw new Error('kvlog serve --listen-grpc did not write `grpc` to its ready file')
    }
    return {
      endpoint: server.grpc,
      stop: async () => {
        await server.stop()
        await server.cleanup()
      },
    }
  },
}

export const targets: Target[] = [etcdTarget, kvlogTarget]
