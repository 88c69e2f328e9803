/**
 * Looks at a LevelLog's database directly (while no log has it open): the log table's entries and the
 * hist table's keys, for tests of what compaction leaves on disk.
 */
import { ClassicLevel } from '../../../log/level/classic-level.js'
import { histPrefixUserKey, LOG_END, LOG_START, logKeyRevision, parseHistKey, TAG_HIST } from '../../../log/level/keyspace.js'
import type { Db } from '../../../log/level/latest-view.js'
import { decodeEntry, type LoggedEntry } from '../../../log/level/records.js'

export interface RawTables {
  /** Log entries by revision, with their encoded size. */
  log: Map<number, LoggedEntry & { bytes: number }>
  /** Every hist record as "key@rev" (keys as UTF-8). */
  hist: string[]
  /** The kind of each hist record (its first byte: IN_LOG, TOMBSTONE, MATERIALIZED) by "key@rev". */
  histKinds: Map<string, number>
}

/** Opens the database at `dir` raw for `fn` (the log must be closed). */
export async function withRawDb<T>(dir: string, fn: (db: Db) => Promise<T>): Promise<T> {
  const db: Db = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' })
  await db.open()
  try {
    return await fn(db)
  } finally {
    await db.close()
  }
}

export async function readRawTables(db: Db): Promise<RawTables> {
  const log = new Map<number, LoggedEntry & { bytes: number }>()
  for await (const [k, v] of db.iterator({ gte: LOG_START, lt: LOG_END }))
    log.set(logKeyRevision(k), { ...decodeEntry(v), bytes: v.length })
  const hist: string[] = []
  const histKinds = new Map<string, number>()
  for await (const [k, v] of db.iterator({ gte: Buffer.from([TAG_HIST]), lt: Buffer.from([TAG_HIST + 1]) })) {
    const { prefix, rev } = parseHistKey(k)
    const name = `${histPrefixUserKey(prefix).toString()}@${rev}`
    hist.push(name)
    histKinds.set(name, v[0])
  }
  return { log, hist, histKinds }
}

/** The log entries below `floor`: how many, and their encoded bytes (what status().belowFloor counts). */
export function belowFloorOf(tables: RawTables, floor: number): { entries: number; bytes: number } {
  let entries = 0
  let bytes = 0
  for (const [rev, e] of tables.log) {
    if (rev >= floor) continue
    entries++
    bytes += e.bytes
  }
  return { entries, bytes }
}
