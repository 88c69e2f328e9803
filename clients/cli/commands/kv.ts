/** put, get, del, txn. */
import { readFile } from 'node:fs/promises'
import { leaseHex, leaseIdArg, UsageError } from '../args.js'
import { bool, int, str, type Context } from '../context.js'
import { display, kvJson, table } from '../output.js'
import { parsePoint, stateRevision } from '../points.js'

/** put KEY VALUE | put KEY - (the value from stdin) | put KEY --file FILE; values are bytes, kept exactly. */
export async function put(c: Context): Promise<number> {
  const [key, arg] = c.p.args
  const file = str(c, 'file')
  if ((arg === undefined) === (file === undefined)) throw new UsageError('put takes a VALUE (or - for stdin) or --file FILE, one of them')
  const value = file !== undefined ? await readFile(file) : arg === '-' ? await readStdin() : arg!
  const lease = str(c, 'lease')
  const r = await c.client.put(key, value, {
    prevKv: bool(c, 'prev-kv'),
    ...(lease !== undefined ? { lease: leaseIdArg(lease, '--lease') } : {}),
  })
  if (c.mode === 'json') c.out(JSON.stringify({ revision: r.revision, ...(r.prevKv ? { prevKv: kvJson(r.prevKv) } : {}) }))
  else c.out(`OK revision ${r.revision}${r.prevKv ? ` (was ${display(r.prevKv.value)})` : ''}`)
  return 0
}

export async function get(c: Context): Promise<number> {
  const [key] = c.p.args
  const rev = str(c, 'rev')
  const valueOnly = bool(c, 'print-value-only')
  if (valueOnly && (bool(c, 'keys-only') || bool(c, 'count-only')))
    throw new UsageError('--print-value-only cannot go with --keys-only or --count-only')
  const r = await c.client.range(key, {
    prefix: bool(c, 'prefix'),
    fromKey: bool(c, 'from-key'),
    limit: int(c, 'limit'),
    keysOnly: bool(c, 'keys-only'),
    countOnly: bool(c, 'count-only'),
    ...(rev !== undefined ? { revision: await stateRevision(c.client, parsePoint(rev, '--rev')) } : {}),
  })
  if (valueOnly) {
    // The raw bytes, for pipes and files; several keys' values are written one after another.
    for (const kv of r.kvs) process.stdout.write(kv.value)
    return r.kvs.length > 0 ? 0 : 1
  }
  if (c.mode === 'json') {
    c.out(JSON.stringify({ revision: r.revision, count: r.count, more: r.more, kvs: r.kvs.map(kvJson) }))
    return 0
  }
  if (bool(c, 'count-only')) {
    c.out(String(r.count))
    return 0
  }
  const leaseOf = (kv: { lease: bigint }) => (kv.lease === 0n ? '' : leaseHex(kv.lease))
  const withLease = r.kvs.some((kv) => kv.lease !== 0n)
  const head = ['KEY', ...(bool(c, 'keys-only') ? [] : ['VALUE']), 'CREATE', 'MOD', 'VERSION', ...(withLease ? ['LEASE'] : [])]
  c.out(
    table([
      head,
      ...r.kvs.map((kv) => [
        display(kv.key),
        ...(bool(c, 'keys-only') ? [] : [display(kv.value)]),
        String(kv.createRevision),
        String(kv.modRevision),
        String(kv.version),
        ...(withLease ? [leaseOf(kv)] : []),
      ]),
    ]),
  )
  if (r.more) c.out(`(${r.count - r.kvs.length} more; revision ${r.revision})`)
  return 0
}

export async function del(c: Context): Promise<number> {
  const [key] = c.p.args
  const r = await c.client.delete(key, { prefix: bool(c, 'prefix'), fromKey: bool(c, 'from-key'), prevKv: bool(c, 'prev-kv') })
  if (c.mode === 'json')
    c.out(JSON.stringify({ revision: r.revision, deleted: r.deleted, ...(r.prevKvs ? { prevKvs: r.prevKvs.map(kvJson) } : {}) }))
  else {
    c.out(`deleted ${r.deleted}${r.deleted > 0 ? ` at revision ${r.revision}` : ''}`)
    if (r.prevKvs !== undefined && r.prevKvs.length > 0)
      c.out(
        table([
          ['KEY', 'VALUE', 'MOD', 'VERSION'],
          ...r.prevKvs.map((kv) => [display(kv.key), display(kv.value), String(kv.modRevision), String(kv.version)]),
        ]),
      )
  }
  return 0
}

/** txn [FILE]: the JSON request from a file, or stdin (docs/api.md, POST /v1/txn). */
export async function txn(c: Context): Promise<number> {
  const [file] = c.p.args
  const source = file === undefined || file === '-' ? (await readStdin()).toString('utf8') : await readFile(file, 'utf8')
  let request: Record<string, unknown>
  try {
    request = JSON.parse(source) as Record<string, unknown>
  } catch (err) {
    throw new SyntaxError(`the transaction is not valid JSON: ${(err as Error).message}`, { cause: err })
  }
  const r = await c.client.txn(request)
  if (c.mode === 'json') c.out(JSON.stringify(r))
  else c.out(`${r.succeeded ? 'SUCCESS' : 'FAILURE'} revision ${r.revision}\n${r.results.map((x) => JSON.stringify(x)).join('\n')}`)
  return 0
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}
