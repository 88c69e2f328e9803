/**
 * GET /v1/keys/tree — one level of the key space seen as a tree of `/`-separated segments, with the
 * number of keys under each child, at the latest or a given revision.
 *
 * Query: `prefix` | `prefixBase64` (absent or empty: the whole key space), `revision`, `limit` (children
 * per page, 1..keyTreeMaxChildren, default 200), `continue` | `continueBase64` (the `continue` of the
 * previous page; with it, pass the previous page's revision).
 *
 * A child is either a subtree (`name` ends with `/`: every key starting with prefix + name; `count` keys)
 * or a leaf (a key that is exactly prefix + name, count 1). The walk skips over each subtree (one
 * one-key read to find the next child, one count per subtree), so a page costs `limit` small reads, not a
 * scan of every key below the prefix.
 */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { invalid } from '../../../log/errors.js'
import { prefixEnd } from '../../../log/keys.js'
import { getBytes, putBytes, type JsonObject } from '../../codec.js'
import { onlyFields, queryInt, type Query } from '../../params.js'

const SLASH = 0x2f
const ALL = Buffer.from([0])

export function keyTreeRoute(app: FastifyInstance, log: Log, maxChildren: number): void {
  app.get('/v1/keys/tree', async (request) => {
    const q = request.query as Query
    onlyFields(q, ['prefix', 'prefixBase64', 'revision', 'limit', 'continue', 'continueBase64'], '')
    const prefix = getBytes(q as JsonObject, 'prefix') ?? Buffer.alloc(0)
    const limit = queryInt(q, 'limit') ?? Math.min(200, maxChildren)
    if (limit < 1 || limit > maxChildren) throw invalid('limit', `must be between 1 and ${maxChildren}`)
    const after = getBytes(q as JsonObject, 'continue')
    if (after !== undefined && !after.subarray(0, prefix.length).equals(prefix)) throw invalid('continue', 'does not belong to this prefix')
    // The whole key space: from the smallest key [0x00] on (the empty key cannot be stored).
    const end = prefix.length === 0 ? ALL : prefixEnd(prefix)
    // Pin the revision first, so every read of the page sees the same state.
    // (A read of the prefix's own range: a caller allowed to read the prefix may list its tree.)
    const revision = (
      await log.range(prefix.length === 0 ? ALL : prefix, { rangeEnd: end, revision: queryInt(q, 'revision'), limit: 1, keysOnly: true })
    ).revision
    let cursor = after ?? (prefix.length === 0 ? ALL : prefix)
    const children: JsonObject[] = []
    let next: Buffer | undefined
    while (true) {
      const r = await log.range(cursor, { rangeEnd: end, revision, limit: 1, keysOnly: true })
      const first = r.kvs[0]
      if (first === undefined) break
      if (children.length === limit) {
        next = cursor
        break
      }
      const rest = first.key.subarray(prefix.length)
      const slash = rest.indexOf(SLASH)
      const child: JsonObject = {}
      if (slash < 0) {
        putBytes(child, 'name', rest)
        child.count = 1
        child.leaf = true
        cursor = Buffer.concat([first.key, ALL])
      } else {
        const sub = first.key.subarray(0, prefix.length + slash + 1)
        putBytes(child, 'name', rest.subarray(0, slash + 1))
        child.count = (await log.range(sub, { rangeEnd: prefixEnd(sub), revision, countOnly: true })).count
        child.leaf = false
        cursor = prefixEnd(sub)
      }
      children.push(child)
      // A subtree of keys that are all 0xff bytes reaches the end of the key space.
      if (cursor.equals(ALL)) break
    }
    // A whole level in one page (the common case) already counted every key below the prefix.
    const count =
      after === undefined && next === undefined
        ? children.reduce((n, c) => n + (c.count as number), 0)
        : (await log.range(prefix.length === 0 ? ALL : prefix, { rangeEnd: end, revision, countOnly: true })).count
    const body: JsonObject = { header: { revision }, count, children }
    if (next !== undefined) putBytes(body, 'continue', next)
    return body
  })
}
