/**
 * What the cluster engine writes to its JetStream stream: one message per group of commands, decided by
 * the leader, applied by every member in stream order. Commands, not results: applying the same commands
 * in the same order to the same state gives the same revisions everywhere, because everything that is
 * not determined by the state travels in the message (the commit timestamp, lease ids picked by the
 * leader; lease deadlines are timestamp + TTL).
 *
 * A message is either a batch of writes (txns, lease grants, keep-alives and revokes), applied as one
 * durable LevelDB batch together with its stream sequence, or exactly one idempotent command (compaction,
 * a meta record, an alarm, a member joining), applied and then recorded: a crash in between re-applies it harmlessly.
 *
 * In the protocol as a whole: docs/cluster-protocol.md, "Messages and the hash chain".
 */
import { createHash } from 'node:crypto'
import { Packr } from 'msgpackr'
import type { ReplicatedWrite } from '../replica.js'

/** Idempotent commands, each alone in its message. */
export type SoloCommand =
  | { type: 'compact'; revision: number }
  | { type: 'meta'; name: string; value: unknown; ifRevision?: number }
  | { type: 'alarm'; kind: 'NOSPACE'; active: boolean }
  /**
   * Adds a member to the roster whose majority acknowledges writes (durability.ts), and records its
   * incarnation (absent: a member of a version that had none).
   */
  | { type: 'join'; name: string; incarnation?: string; peerUrls?: string[] }
  /**
   * Takes a member off the roster (etcd's MemberRemove); with `id`, a member added that never started
   * (name '').
   */
  | { type: 'leave'; name: string; id?: string }
  /**
   * Registers a member by its peer URLs before it starts (etcd's MemberAdd); the member that joins with
   * one of them takes `id`, and does not count toward the majority while it is a learner.
   */
  | { type: 'add'; id: string; peerUrls: string[]; learner: boolean }
  /** Makes a learner count toward the majority (etcd's MemberPromote). */
  | { type: 'promote'; name: string }
  /** Gives a member new peer URLs (etcd's MemberUpdate); with `id`, a member added that never started (name ''). */
  | { type: 'update'; name: string; id?: string; peerUrls: string[] }

export type Command = ReplicatedWrite | SoloCommand

/** A command with the id its submitter waits on (member name + counter), unique in the cluster. */
export interface Tagged<C extends Command = Command> {
  rid: string
  cmd: C
}

export interface LogMessage {
  /** Format version. */
  v: 1
  /** The commit timestamp of every entry the message makes (ms since the epoch, never decreasing). */
  ts: number
  /** The leader epoch that published it. */
  epoch: number
  /**
   * messageHash() of the message before it in the stream ('' before the first): a chain. A member whose
   * copy was built from a different history (a stream that lost its tail and was written again) sees the
   * mismatch and stops applying instead of forking.
   */
  prev: string
  cmds: Tagged[]
}

export const FORMAT = 1

// int64AsType 'bigint': lease ids (bigint) round-trip as bigint; numbers are encoded as numbers.
const packr = new Packr({ useRecords: false, int64AsType: 'bigint' })

export function encode(value: unknown): Buffer {
  return packr.pack(value)
}

export function decode<T>(bytes: Uint8Array): T {
  return packr.unpack(bytes) as T
}

/** A short digest of a message's bytes (they include its `prev`, so it covers the whole history). */
export function messageHash(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('base64url').slice(0, 22)
}

export function isSolo(cmd: Command): cmd is SoloCommand {
  return (
    cmd.type === 'compact' ||
    cmd.type === 'meta' ||
    cmd.type === 'alarm' ||
    cmd.type === 'join' ||
    cmd.type === 'leave' ||
    cmd.type === 'add' ||
    cmd.type === 'promote' ||
    cmd.type === 'update'
  )
}

export function decodeMessage(bytes: Uint8Array): LogMessage {
  const m = decode<LogMessage>(bytes)
  if (
    m === null ||
    typeof m !== 'object' ||
    m.v !== FORMAT ||
    !Array.isArray(m.cmds) ||
    typeof m.ts !== 'number' ||
    typeof m.prev !== 'string'
  ) {
    throw new Error('not a kvlog log message')
  }
  return m
}
