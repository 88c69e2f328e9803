/**
 * GET /v1/snapshot — streams a consistent, checksummed copy of the whole database (log/level/snapshot.ts) as
 * application/octet-stream. Headers: x-kvlog-revision (the revision the copy holds) and
 * x-kvlog-snapshot-size-estimate (the database's approximate size, for progress; the stream's exact length
 * is not known in advance, so it is sent chunked). `kvlog snapshot restore` turns the bytes into a data dir.
 *
 * Backpressure: the next chunk is read from the store only once the socket took the previous one. A client
 * that goes away ends the iteration, which releases the store's snapshot. An error mid-stream destroys the
 * connection, so the client sees a truncated stream (which the trailing checksum catches), never a
 * stream that looks complete.
 */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { drainedOrGone } from '../../drained.js'
import { onlyFields, type Query } from '../../params.js'

const SNAPSHOT_REVISION_HEADER = 'x-kvlog-revision'
const SNAPSHOT_SIZE_HEADER = 'x-kvlog-snapshot-size-estimate'

export function snapshotRoute(app: FastifyInstance, log: Log): void {
  app.get('/v1/snapshot', async (request, reply) => {
    onlyFields(request.query as Query, [], '')
    // Taken before the hijack, so a closed store still answers with a normal error body.
    const snap = await log.snapshot()
    reply.hijack()
    const res = reply.raw
    let gone = false
    res.on('close', () => (gone = true))
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      [SNAPSHOT_REVISION_HEADER]: String(snap.revision),
      [SNAPSHOT_SIZE_HEADER]: String(snap.estimatedBytes),
      'cache-control': 'no-store',
    })
    try {
      for await (const chunk of snap.chunks) {
        if (gone) break
        if (!res.write(chunk)) await drainedOrGone(res)
      }
      if (!gone) res.end()
    } catch (err) {
      request.log.error({ err }, 'snapshot stream failed')
      res.destroy()
    }
  })
}
