/**
 * The offline `kvlog snapshot restore FILE --data-dir DIR` (main.ts): writes a fresh data directory from a
 * snapshot file with the engine's restoreSnapshot (log/level/snapshot.ts), which checks the trailing sha256
 * before the last batch is written.
 *
 * DIR must be missing or empty. On any failure (a corrupt or truncated file included) what was written is
 * removed again: DIR itself if this created it, else its contents.
 */
import { createReadStream } from 'node:fs'
import { createHash } from 'node:crypto'
import { mkdir, open, readdir, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { isKvlogError, KvlogError, restoreSnapshot } from '../log/index.js'
import { looksLikeBbolt } from '../apiserver/etcd-snapshot/bbolt-read.js'

/** Progress of a long transfer, drawn by the caller (main.ts gets it from bin/kvlog). */
export interface Progress {
  update(bytes: number): void
  done(): void
}

export interface RestoredFile {
  records: number
  bytes: number
  /** sha256 of the whole file, as `sha256sum` prints it. */
  sha256: string
}

export async function restoreFile(file: string, dir: string, progress: (totalBytes: number) => Progress): Promise<RestoredFile> {
  const existing = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined
    throw err
  })
  if (existing !== undefined && existing.length > 0) throw new Error(`${dir} is not empty: restore writes a fresh data directory`)
  const { size } = await stat(file)
  await mkdir(dir, { recursive: true })
  const bar = progress(size)
  const hash = createHash('sha256')
  const source = (async function* () {
    for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) {
      hash.update(chunk as Buffer)
      yield chunk as Buffer
    }
  })()
  try {
    const r = await restoreSnapshot(source, dir, (bytes) => bar.update(bytes))
    bar.done()
    return { ...r, sha256: hash.digest('hex') }
  } catch (err) {
    if (existing === undefined) await rm(dir, { recursive: true, force: true })
    else for (const name of await readdir(dir)) await rm(join(dir, name), { recursive: true, force: true })
    throw await explainEtcdSnapshot(err, file)
  }
}

/** An etcd snapshot given to the kvlog restore (etcdctl snapshot save against kvlog writes one): say so. */
async function explainEtcdSnapshot(err: unknown, file: string): Promise<unknown> {
  if (!isKvlogError(err, 'INVALID_ARGUMENT') || err.details.field !== 'snapshot') return err
  const f = await open(file, 'r')
  try {
    const head = Buffer.alloc(64)
    await f.read(head, 0, head.length, 0)
    if (!looksLikeBbolt(head)) return err
  } finally {
    await f.close()
  }
  return new KvlogError(
    'INVALID_ARGUMENT',
    `${file} is an etcd snapshot (bbolt), not a kvlog snapshot: import it with "kvlog import --from-etcd-snapshot ${file} --data-dir DIR"`,
    { field: 'snapshot', reason: 'ETCD_SNAPSHOT' },
  )
}
