/**
 * Who this member is, for etcd's response headers and the Cluster/Maintenance APIs: a cluster id and a
 * member id, chosen at random on the first start and kept in the store (so they are stable across
 * restarts, as etcd's are), and a fixed raft term (kvlog has no raft; one member is always the leader).
 */
import { randomBytes } from 'node:crypto'
import type { Log } from '../../log/backend.js'
import type { Message } from './proto.js'
import { HeaderEncoder } from './wire.js'

const IDENTITY_RECORD = 'etcd/identity'
const RAFT_TERM = 2

export interface Identity {
  /** uint64s as decimal strings. */
  clusterId: string
  memberId: string
}

export async function loadIdentity(log: Log): Promise<Identity> {
  const stored = (await log.readMeta(IDENTITY_RECORD)) as Identity | undefined
  if (stored !== undefined) return stored
  const id = () => (randomBytes(8).readBigUInt64BE() | 1n).toString()
  const identity = { clusterId: id(), memberId: id() }
  await log.writeMeta(IDENTITY_RECORD, identity)
  return identity
}

export class Headers {
  private readonly encoder: HeaderEncoder

  constructor(
    readonly identity: Identity,
    private readonly log: Log,
  ) {
    this.encoder = new HeaderEncoder(BigInt(identity.clusterId), BigInt(identity.memberId), RAFT_TERM)
  }

  /** The same header, encoded (wire.ts): for the responses encoded by hand. */
  encoded(revision: number = this.log.revision): Buffer {
    return this.encoder.header(revision)
  }

  /** A ResponseHeader at `revision` (default: the store's current revision). */
  header(revision: number = this.log.revision): Message {
    return { cluster_id: this.identity.clusterId, member_id: this.identity.memberId, revision, raft_term: RAFT_TERM }
  }
}
