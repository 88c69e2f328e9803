/**
 * Output of the client commands. Human form: aligned tables. Machine form (`-o json`): JSON, and for
 * streams (watch, history) one JSON object per line. Bytes that are not valid UTF-8 are given as
 * keyBase64 / valueBase64 instead of key / value.
 */
import type { KeyValue, WatchEvent } from '../codec.js'

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

export function text(bytes: Buffer): string | undefined {
  try {
    return UTF8.decode(bytes)
  } catch {
    return undefined
  }
}

function bytesOut(out: Record<string, unknown>, name: string, bytes: Buffer): void {
  const t = text(bytes)
  if (t !== undefined) out[name] = t
  else out[`${name}Base64`] = bytes.toString('base64')
}

/** `{ name: text }` or `{ nameBase64: ... }` for bytes that are not UTF-8; `{}` for undefined. */
export function bytesJson(name: string, bytes: Buffer | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  if (bytes !== undefined) bytesOut(out, name, bytes)
  return out
}

/** For tables: the text, or base64: prefixed when it is not UTF-8. */
export function display(bytes: Buffer): string {
  return text(bytes) ?? `base64:${bytes.toString('base64')}`
}

export function kvJson(kv: KeyValue): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  bytesOut(out, 'key', kv.key)
  bytesOut(out, 'value', kv.value)
  out.createRevision = kv.createRevision
  out.modRevision = kv.modRevision
  out.version = kv.version
  if (kv.lease !== 0n) {
    out.lease = kv.lease.toString()
    out.leaseHex = kv.lease.toString(16)
  }
  return out
}

/** One event line: type, key, value, revisions, version, time, and prevValue when asked. */
export function eventJson(e: WatchEvent, time: string | undefined, withPrev: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { type: e.type }
  bytesOut(out, 'key', e.kv.key)
  bytesOut(out, 'value', e.kv.value)
  out.revision = e.revision
  out.createRevision = e.kv.createRevision
  out.modRevision = e.kv.modRevision
  out.version = e.kv.version
  if (time !== undefined) out.time = time
  if (withPrev && e.prevKv !== undefined) bytesOut(out, 'prevValue', e.prevKv.value)
  if (e.author !== undefined) out.author = e.author
  return out
}

export function table(rows: string[][]): string {
  if (rows.length === 0) return ''
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)))
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n')
}

/**
 * What changed between two JSON documents, one line per changed path (`.spec.replicas: 2 → 3`);
 * undefined when either side is not JSON.
 */
export function jsonDiff(before: Buffer, after: Buffer): string[] | undefined {
  let a: unknown
  let b: unknown
  try {
    a = JSON.parse(before.toString('utf8'))
    b = JSON.parse(after.toString('utf8'))
  } catch {
    return undefined
  }
  const lines: string[] = []
  walk(a, b, '', lines)
  return lines
}

function walk(a: unknown, b: unknown, path: string, out: string[]): void {
  const objects = typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && Array.isArray(a) === Array.isArray(b)
  if (!objects) {
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push(`${path || '.'}: ${show(a)} → ${show(b)}`)
    return
  }
  const ao = a as Record<string, unknown>
  const bo = b as Record<string, unknown>
  for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)])) {
    walk(ao[k], bo[k], Array.isArray(a) ? `${path}[${k}]` : `${path}.${k}`, out)
  }
}

function show(v: unknown): string {
  return v === undefined ? '(absent)' : JSON.stringify(v)
}
