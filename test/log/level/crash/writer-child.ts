/**
 * The victim of the crash test (test/log/level/crash.test.ts): `node writer-child.js <dir> [cycle] [writers]`.
 *
 * Opens a LevelLog with fsync 'always' on <dir> and runs `writers` (default 64) concurrent writers (puts,
 * 2-key txns, deletes) until it is killed. One writer's groups are written inline (io/inline-write.ts).
 * Protocol on stdout, one JSON object per line:
 *   {"ready":true,"revision":R}              after open (R = the recovered revision)
 *   {"key":K,"value":V,"revision":R,"inline":N}  after each acknowledged write (V = null for a delete; N =
 *                                            batches written inline so far)
 * A line is printed only after the write resolved, with one process.stdout.write per acknowledgement (a pipe
 * write is synchronous on Linux, so a printed line is never lost to SIGKILL; a txn's two lines go together).
 */
import { openLevelLog } from '../../../../log/level/level-log.js'

const KEYS = 32

async function main(): Promise<void> {
  const dir = process.argv[2]
  const cycle = process.argv[3] ?? '0'
  const writers = Number(process.argv[4] ?? 64)
  if (dir === undefined) throw new Error('usage: writer-child.js <dir> [cycle]')
  const log = await openLevelLog({ dir, fsync: 'always', segmentMaxEntries: 200 })
  process.stdout.write(`${JSON.stringify({ ready: true, revision: log.revision })}\n`)
  const ack = (lines: Array<{ key: string; value: string | null; revision: number }>): void => {
    const inline = log.writerStats.inlineBatches
    process.stdout.write(lines.map((l) => `${JSON.stringify({ ...l, inline })}\n`).join(''))
  }
  const writer = async (w: number): Promise<void> => {
    for (let n = 0; ; n++) {
      const value = `c${cycle}.w${w}.n${n}`
      const kind = (w + n) % 10
      if (kind < 7) {
        const key = `k${(w * 7 + n) % KEYS}`
        const r = await log.put(key, value)
        ack([{ key, value, revision: r.revision }])
      } else if (kind < 9) {
        const a = `t${w % 8}.a`
        const b = `t${(w + n) % 8}.b`
        const r = await log.txn({
          success: [
            { type: 'put', key: a, value: `${value}.a` },
            { type: 'put', key: b, value: `${value}.b` },
          ],
        })
        ack([
          { key: a, value: `${value}.a`, revision: r.revision },
          { key: b, value: `${value}.b`, revision: r.revision },
        ])
      } else {
        const key = `k${(w + n * 3) % KEYS}`
        const r = await log.delete(key)
        if (r.wrote) ack([{ key, value: null, revision: r.revision }])
      }
    }
  }
  await Promise.all(Array.from({ length: writers }, (_, w) => writer(w)))
}

main().catch((err: unknown) => {
  process.stderr.write(`writer-child failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
  process.exit(1)
})
