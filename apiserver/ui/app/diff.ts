/**
 * What changed between two versions of a value. JSON on both sides: a structural diff, one row per
 * changed path (`.spec.replicas: 2 → 3`). Otherwise a line diff (longest common subsequence; for values
 * of more than 2,000 lines, the lines in the middle that differ are shown as removed and added).
 */

export type DiffRow = { kind: 'add' | 'del' | 'same'; text: string }

function parse(s: string): { ok: true; v: unknown } | { ok: false } {
  try {
    return { ok: true, v: JSON.parse(s) }
  } catch {
    return { ok: false }
  }
}

function show(v: unknown): string {
  return v === undefined ? '(absent)' : JSON.stringify(v)
}

function walk(a: unknown, b: unknown, path: string, out: DiffRow[]): void {
  const objects = typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && Array.isArray(a) === Array.isArray(b)
  if (!objects) {
    if (JSON.stringify(a) === JSON.stringify(b)) return
    if (a !== undefined) out.push({ kind: 'del', text: `${path || '.'}: ${show(a)}` })
    if (b !== undefined) out.push({ kind: 'add', text: `${path || '.'}: ${show(b)}` })
    return
  }
  const ao = a as Record<string, unknown>
  const bo = b as Record<string, unknown>
  for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)]))
    walk(ao[k], bo[k], Array.isArray(a) ? `${path}[${k}]` : `${path}.${k}`, out)
}

/** Structural rows when both are JSON objects or arrays, undefined otherwise. */
export function jsonDiff(before: string, after: string): DiffRow[] | undefined {
  const a = parse(before)
  const b = parse(after)
  if (!a.ok || !b.ok || typeof a.v !== 'object' || typeof b.v !== 'object' || a.v === null || b.v === null) return undefined
  const rows: DiffRow[] = []
  walk(a.v, b.v, '', rows)
  return rows
}

export function lineDiff(before: string, after: string): DiffRow[] {
  const a = before.split('\n')
  const b = after.split('\n')
  let head = 0
  while (head < a.length && head < b.length && a[head] === b[head]) head++
  let tail = 0
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++
  const am = a.slice(head, a.length - tail)
  const bm = b.slice(head, b.length - tail)
  const rows: DiffRow[] = a.slice(0, head).map((text) => ({ kind: 'same' as const, text }))
  if (am.length * bm.length > 4_000_000) {
    rows.push(...am.map((text) => ({ kind: 'del' as const, text })), ...bm.map((text) => ({ kind: 'add' as const, text })))
  } else {
    // lcs[i][j]: the longest common subsequence of am[i..] and bm[j..].
    const lcs = Array.from({ length: am.length + 1 }, () => new Uint32Array(bm.length + 1))
    for (let i = am.length - 1; i >= 0; i--)
      for (let j = bm.length - 1; j >= 0; j--) {
        lcs[i][j] = am[i] === bm[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1])
      }
    let i = 0
    let j = 0
    while (i < am.length || j < bm.length) {
      if (i < am.length && j < bm.length && am[i] === bm[j]) {
        rows.push({ kind: 'same', text: am[i] })
        i++
        j++
      } else if (j < bm.length && (i === am.length || lcs[i][j + 1] >= lcs[i + 1][j])) rows.push({ kind: 'add', text: bm[j++] })
      else rows.push({ kind: 'del', text: am[i++] })
    }
  }
  rows.push(...a.slice(a.length - tail).map((text) => ({ kind: 'same' as const, text })))
  return rows
}

/** The diff to show between two values: structural for JSON, by lines otherwise. */
export function valueDiff(before: string, after: string): { kind: 'json' | 'lines'; rows: DiffRow[] } {
  const j = jsonDiff(before, after)
  return j !== undefined ? { kind: 'json', rows: j } : { kind: 'lines', rows: lineDiff(before, after) }
}

/** A value for display: JSON pretty-printed, anything else as it is. */
export function pretty(value: string): string {
  const p = parse(value)
  return p.ok && typeof p.v === 'object' && p.v !== null ? JSON.stringify(p.v, null, 2) : value
}
