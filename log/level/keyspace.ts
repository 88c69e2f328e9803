/**
 * The on-disk keyspace of LevelLog.
 *
 * One LevelDB database holds four tables, each under a one-byte tag (our "sublevels"):
 *
 *   tag   table  key                                          value
 *   ────  ─────  ───────────────────────────────────────────  ─────────────────────────────────────────────
 *   0x01  log    rev (8 bytes, big-endian)                    the entry: timestamp + ops (msgpackr)
 *   0x02  kv     user key                                     current state of a live key (kv record)
 *   0x03  hist   esc(user key) 00 00 ~rev (8 bytes, BE)       what happened to the key at rev (hist record)
 *   0x04  meta   name (ASCII)                                 format version, compaction state, segments
 *
 * hist is the index for reads at a past revision. User keys may contain any byte, so they are escaped
 * (00 → 00 FF) and terminated by 00 00: the encoding is unambiguous and keeps the byte order of keys.
 * The revision is stored inverted (~rev = 2^64-1-rev), so within one key the newest version sorts first:
 * a forward seek to esc(key) 00 00 ~R lands on the newest version at or below R.
 *
 *   esc("a")    = 61 00 00 ~rev...        ┐ all versions of "a", newest first
 *   esc("a\0")  = 61 00 FF 00 00 ~rev...  ┘ then "a\0": 00 FF sorts after the terminator 00 00
 *   esc("ab")   = 61 62 00 00 ~rev...       then "ab"
 */
import type { Bounds } from '../keys.js'

export const TAG_LOG = 0x01
export const TAG_KV = 0x02
export const TAG_HIST = 0x03
export const TAG_META = 0x04

const TWO_32 = 0x1_0000_0000

// ---------------------------------------------------------------------------------------------------------
// Revisions as 8 big-endian bytes (revisions are safe integers, so the high word stays below 2^21)

export function writeRev(target: Buffer, offset: number, rev: number): void {
  target.writeUInt32BE(Math.floor(rev / TWO_32), offset)
  target.writeUInt32BE(rev >>> 0, offset + 4)
}

export function readRev(source: Buffer, offset: number): number {
  return source.readUInt32BE(offset) * TWO_32 + source.readUInt32BE(offset + 4)
}

// ---------------------------------------------------------------------------------------------------------
// log table

export function logKey(rev: number): Buffer {
  const k = Buffer.allocUnsafe(9)
  k[0] = TAG_LOG
  writeRev(k, 1, rev)
  return k
}

export function logKeyRevision(k: Buffer): number {
  return readRev(k, 1)
}

export const LOG_START = Buffer.from([TAG_LOG])
export const LOG_END = Buffer.from([TAG_LOG + 1])

// ---------------------------------------------------------------------------------------------------------
// kv table

export function kvKey(key: Buffer): Buffer {
  const k = Buffer.allocUnsafe(key.length + 1)
  k[0] = TAG_KV
  key.copy(k, 1)
  return k
}

export function kvKeyUserKey(k: Buffer): Buffer {
  return k.subarray(1)
}

/** The kv-table bounds of a user-key range, for iterator gte/lt. */
export function kvBounds(b: Bounds): { gte: Buffer; lt: Buffer } {
  return { gte: kvKey(b.start), lt: b.end === undefined ? Buffer.from([TAG_KV + 1]) : kvKey(b.end) }
}

// ---------------------------------------------------------------------------------------------------------
// hist table

export const HIST_START = Buffer.from([TAG_HIST])
export const HIST_END = Buffer.from([TAG_HIST + 1])

/** esc(key) 00 00, prefixed with the hist tag: every version of `key` starts with this. */
export function histKeyPrefix(key: Buffer): Buffer {
  const out = Buffer.allocUnsafe(histPrefixLength(key))
  writeHistPrefix(out, key)
  return out
}

/** The hist key of `key` at `rev` (one allocation: compaction makes one per version it removes). */
export function histKey(key: Buffer, rev: number): Buffer {
  const out = Buffer.allocUnsafe(histPrefixLength(key) + 8)
  writeInvertedRev(out, writeHistPrefix(out, key), rev)
  return out
}

export function histKeyFromPrefix(prefix: Buffer, rev: number): Buffer {
  const out = Buffer.allocUnsafe(prefix.length + 8)
  prefix.copy(out, 0)
  writeInvertedRev(out, prefix.length, rev)
  return out
}

function histPrefixLength(key: Buffer): number {
  let zeros = 0
  for (let i = 0; i < key.length; i++) if (key[i] === 0) zeros++
  return 1 + key.length + zeros + 2
}

/** Writes the hist prefix of `key` at the start of `out`; returns its length. */
function writeHistPrefix(out: Buffer, key: Buffer): number {
  out[0] = TAG_HIST
  let o = 1
  for (let i = 0; i < key.length; i++) {
    const b = key[i]
    out[o++] = b
    if (b === 0) out[o++] = 0xff
  }
  out[o++] = 0
  out[o++] = 0
  return o
}

/** ~rev over 64 bits (both 32-bit words inverted), so that newer versions sort first. */
function writeInvertedRev(out: Buffer, offset: number, rev: number): void {
  out.writeUInt32BE(0xffffffff - Math.floor(rev / TWO_32), offset)
  out.writeUInt32BE(0xffffffff - (rev >>> 0), offset + 4)
}

/** The first hist key after every version of the key with this prefix (esc(key) 00 01). */
export function histKeyAfter(prefix: Buffer): Buffer {
  const out = Buffer.from(prefix)
  out[out.length - 1] = 1
  return out
}

/** Splits a hist key into its user-key prefix (as histKeyPrefix returns it) and revision. */
export function parseHistKey(k: Buffer): { prefix: Buffer; rev: number } {
  return { prefix: k.subarray(0, k.length - 8), rev: histKeyRevision(k) }
}

/** The revision of a hist key (without making its prefix). */
export function histKeyRevision(k: Buffer): number {
  const split = k.length - 8
  const hi = 0xffffffff - k.readUInt32BE(split)
  const lo = 0xffffffff - k.readUInt32BE(split + 4)
  return hi * TWO_32 + lo
}

/** Whether two hist keys are versions of the same user key (without making their prefixes). */
export function sameHistKey(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && a.compare(b, 0, b.length - 8, 0, a.length - 8) === 0
}

/** Decodes the user key from a hist prefix (undoes the escaping). */
export function histPrefixUserKey(prefix: Buffer): Buffer {
  const out = Buffer.allocUnsafe(prefix.length)
  let o = 0
  for (let i = 1; i < prefix.length - 2; i++) {
    out[o++] = prefix[i]
    if (prefix[i] === 0) i++ // skip the FF of an escaped zero
  }
  return out.subarray(0, o)
}

/** The hist-table bounds of a user-key range. */
export function histBounds(b: Bounds): { gte: Buffer; lt: Buffer } {
  if (b.single) return { gte: histKeyPrefix(b.start), lt: histKeyAfter(histKeyPrefix(b.start)) }
  // esc() preserves order and every version of a key k >= start sorts at or after esc(start) 00 00.
  const gte = histKeyPrefix(b.start)
  const lt = b.end === undefined ? Buffer.from([TAG_HIST + 1]) : histKeyPrefix(b.end)
  return { gte, lt }
}

// ---------------------------------------------------------------------------------------------------------
// meta table

export function metaKey(name: string): Buffer {
  return Buffer.concat([Buffer.from([TAG_META]), Buffer.from(name, 'ascii')])
}
