/**
 * What the reliability suites need of a front door, so one workload and one checker cover them all:
 *
 *   Driver         runs a door-neutral Operation (history.ts) and answers an OpResult, or throws; classify()
 *                  says whether a throw means "not applied" (fail, with a stable code) or "may have been
 *                  applied" (unknown).
 *   WatchConn      one connection carrying many watches, recording every message per watch id in the
 *                  native wire shape (test/support/watch-client.ts), which the watch checker reads.
 *
 * Implementations: native.ts (HTTP + WebSocket), grpc.ts (etcd v3), resources.ts (the Kubernetes-style API).
 */
import type { CreateRequest, Received } from '../../support/watch-client.js'
import type { WatchSpec } from '../../support/watch-specs.js'
import type { Operation, OpResult, Outcome } from '../history.js'

export interface Classified {
  outcome: Exclude<Outcome, 'ok'>
  code: string
}

export interface Driver {
  readonly door: string
  execute(op: Operation): Promise<OpResult>
  classify(err: unknown): Classified
  /** Whether this door can run this kind of operation (e.g. leases are not on every door). */
  supports(type: Operation['type']): boolean
  close(): Promise<void>
}

export interface WatchConn {
  readonly label: string
  readonly isOpen: boolean
  readonly closed: Promise<{ code: number; reason: string }>
  /** The messages of watch `id`, in arrival order (a live array). */
  messagesFor(id: number): Received[]
  onMessage(listener: (rec: Received) => void): () => void
  allocateId(): number
  /** Sends a create request with the given id; answers arrive as messages. */
  create(request: CreateRequest & { id: number }): number
  requestProgress(): void
  terminate(): void
}

/** A front door as the soak sees it: drivers for clients, watch connections, both to one endpoint. */
export interface Door {
  readonly name: string
  driver(label: string): Driver
  connectWatch(label: string): Promise<WatchConn>
  /** Whether this door can carry a watch of `spec` (the resource API only watches its collections). */
  watches(spec: WatchSpec): boolean
  close(): Promise<void>
}
