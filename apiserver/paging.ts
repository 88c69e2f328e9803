/**
 * Continue tokens for paged ranges (the native range API and the resource API's lists). A token holds the
 * revision of the first page and the key to start the next page at, so all pages read one snapshot; it
 * also holds the range it belongs to, so it cannot be replayed against another. Opaque to clients
 * (base64url JSON). Once the revision is compacted the next page fails with COMPACTED (HTTP 410): relist
 * from the start.
 */
import { invalid } from '../log/errors.js'

interface TokenBody {
  v: 1
  /** revision of the listing */
  r: number
  /** next start key, base64 */
  n: string
  /** the listing's key and rangeEnd, base64 ('' = none) */
  k: string
  e: string
}

export function encodeContinue(revision: number, lastKey: Buffer, key: Buffer, rangeEnd: Buffer | undefined): string {
  const next = Buffer.concat([lastKey, Buffer.from([0])])
  const body: TokenBody = {
    v: 1,
    r: revision,
    n: next.toString('base64'),
    k: key.toString('base64'),
    e: rangeEnd?.toString('base64') ?? '',
  }
  return Buffer.from(JSON.stringify(body)).toString('base64url')
}

export function decodeContinue(token: string, key: Buffer, rangeEnd: Buffer | undefined): { revision: number; start: Buffer } {
  let body: TokenBody
  try {
    body = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as TokenBody
  } catch {
    throw invalid('continue', 'is not a continue token from this server')
  }
  if (body?.v !== 1 || !Number.isSafeInteger(body.r) || typeof body.n !== 'string') {
    throw invalid('continue', 'is not a continue token from this server')
  }
  if (body.k !== key.toString('base64') || body.e !== (rangeEnd?.toString('base64') ?? '')) {
    throw invalid('continue', 'belongs to a different key range')
  }
  const start = Buffer.from(body.n, 'base64')
  const inRange =
    Buffer.compare(start, key) > 0 &&
    (rangeEnd === undefined || (rangeEnd.length === 1 && rangeEnd[0] === 0) || Buffer.compare(start, rangeEnd) < 0)
  if (!inRange) throw invalid('continue', 'points outside the requested key range')
  return { revision: body.r, start }
}
