/**
 * dump (--rev REV|TIME | --at TIME) [--prefix P] [-o table|json|yaml|ndjson]: every key of a subtree as it was
 * at a revision, read page by page at that one revision (a consistent snapshot). json and yaml print one
 * document `{ revision, prefix?, count, kvs }`; ndjson one kv per line (streamed, for large subtrees).
 * A prefix with no keys at that revision prints an empty dump and says so on stderr. In yaml, a value that
 * is a JSON object or array is printed as YAML (a `value` mapping or sequence); other values stay strings.
 */
import { stringify } from 'yaml'
import { prefixRange, str, type Context } from '../context.js'
import { display, kvJson, table } from '../output.js'
import { onePoint } from '../points.js'
import type { KeyValue } from '../../codec.js'

/** kvJson, with a value that is a JSON object or array as that structure. */
function yamlKv(kv: KeyValue): Record<string, unknown> {
  const out = kvJson(kv)
  if (typeof out.value !== 'string') return out
  try {
    const parsed: unknown = JSON.parse(out.value)
    if (typeof parsed === 'object' && parsed !== null) out.value = parsed
  } catch {
    // not JSON: the string as it is
  }
  return out
}

export async function dump(c: Context): Promise<number> {
  const revision = await onePoint(c, 'rev', 'at')
  const prefix = str(c, 'prefix')
  const { key, range } = prefixRange(prefix)
  const kvs: Record<string, unknown>[] = []
  const rows: string[][] = [['KEY', 'VALUE', 'CREATE', 'MOD', 'VERSION', 'LEASE']]
  let count = 0
  for await (const page of c.client.list(key, { ...range, revision, pageSize: 1000 })) {
    for (const kv of page.kvs) {
      count++
      if (c.mode === 'ndjson') c.out(JSON.stringify(kvJson(kv)))
      else if (c.mode === 'table')
        rows.push([
          display(kv.key),
          display(kv.value),
          String(kv.createRevision),
          String(kv.modRevision),
          String(kv.version),
          kv.lease === 0n ? '' : kv.lease.toString(),
        ])
      else kvs.push(c.mode === 'yaml' ? yamlKv(kv) : kvJson(kv))
    }
  }
  const doc = { revision, ...(prefix ? { prefix } : {}), count, kvs }
  if (c.mode === 'json') c.out(JSON.stringify(doc, null, 2))
  else if (c.mode === 'yaml') process.stdout.write(stringify(doc))
  else if (c.mode === 'table') c.out(table(rows))
  if (count === 0) process.stderr.write(`dump: no keys${prefix ? ` under ${JSON.stringify(prefix)}` : ''} at revision ${revision}\n`)
  return 0
}
