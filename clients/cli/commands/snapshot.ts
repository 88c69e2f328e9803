/**
 * snapshot save FILE | restore FILE --data-dir DIR [--to-revision REV | --to-time TIME]
 *
 * save downloads GET /v1/snapshot into FILE.part, checks the snapshot's own trailer (magic at the start,
 * sha256 of everything before the last 32 bytes at the end) so a truncated download is never kept, fsyncs,
 * renames it to FILE (replacing one that exists, and mode 0600 whatever the umask) and fsyncs the
 * directory. restore is an offline tool (tools/main.ts, where bin/kvlog sends it); only its usage is listed
 * here.
 */
import { createHash } from 'node:crypto'
import { open, rename, rm } from 'node:fs/promises'
import { basename, dirname } from 'node:path'
import { KvlogClientError } from '../../errors.js'
import { SERVER_SIDE, UsageError } from '../args.js'
import { str, type Context } from '../context.js'
import { progressBar, size } from '../progress.js'

const USAGE = 'snapshot save FILE | snapshot restore FILE --data-dir DIR'
/** log/level/snapshot.ts's format, restated (the client imports nothing from the server side). */
const MAGIC = Buffer.from('KVLOGSNAP1\n', 'ascii')
const HASH_BYTES = 32

export async function snapshot(c: Context): Promise<number> {
  const [verb, file] = c.p.args
  if (verb === 'restore') throw new UsageError(SERVER_SIDE)
  if (verb !== 'save') throw new UsageError(`unknown subcommand ${JSON.stringify(verb)}: ${USAGE}`)
  if (file === undefined || file === '') throw new UsageError(`missing FILE: ${USAGE}`)
  for (const flag of ['data-dir', 'to-revision', 'to-time'])
    if (str(c, flag) !== undefined) throw new UsageError(`--${flag} applies to snapshot restore only`)
  return save(c, file)
}

async function save(c: Context, file: string): Promise<number> {
  const part = `${file}.part`
  const download = await c.client.snapshot().catch((err: unknown) => {
    if (err instanceof KvlogClientError && err.code === 'PERMISSION_DENIED') {
      throw new KvlogClientError(
        err.code,
        'a snapshot needs a user with the root role (as in etcd): give --user root, or a root certificate with --cert/--key',
        err.status,
        err.details,
      )
    }
    throw err
  })
  const bar = progressBar(`snapshot ${basename(file)}`, download.estimatedBytes)
  const whole = createHash('sha256')
  const check = new TrailerCheck()
  let bytes = 0
  // 0600 as etcdctl writes snapshots: the file holds every value; chmod too, for a .part left behind.
  const out = await open(part, 'w', 0o600)
  try {
    await out.chmod(0o600)
    for await (const chunk of download.chunks) {
      check.update(chunk)
      whole.update(chunk)
      await out.write(chunk)
      bytes += chunk.length
      bar.update(bytes)
    }
    check.verify()
    await out.sync()
    await out.close()
    bar.done()
    await rename(part, file)
    await syncDir(dirname(file))
  } catch (err) {
    await download.cancel()
    await out.close().catch(() => undefined)
    await rm(part, { force: true })
    throw err
  }
  const sha256 = whole.digest('hex')
  if (c.mode === 'json') c.out(JSON.stringify({ file, revision: download.revision, bytes, sha256 }))
  else c.out(`snapshot saved to ${file}: revision ${download.revision}, ${bytes} bytes (${size(bytes)}), sha256 ${sha256}`)
  return 0
}

/** Checks a snapshot stream as it passes: the magic first, and last the sha256 of all that came before. */
class TrailerCheck {
  private readonly hash = createHash('sha256')
  private head = Buffer.alloc(0)
  private tail = Buffer.alloc(0)

  update(chunk: Buffer): void {
    if (this.head.length < MAGIC.length) this.head = Buffer.concat([this.head, chunk.subarray(0, MAGIC.length - this.head.length)])
    const joined = this.tail.length === 0 ? chunk : Buffer.concat([this.tail, chunk])
    const keep = Math.min(HASH_BYTES, joined.length)
    this.hash.update(joined.subarray(0, joined.length - keep))
    this.tail = Buffer.from(joined.subarray(joined.length - keep))
  }

  verify(): void {
    if (!this.head.equals(MAGIC)) throw new Error('the server did not send a kvlog snapshot')
    if (this.tail.length !== HASH_BYTES || !this.hash.digest().equals(this.tail)) {
      throw new Error('the download is truncated or corrupt (its checksum does not match); nothing was saved')
    }
  }
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => undefined)
  if (handle === undefined) return
  await handle.sync().catch(() => undefined) // not every platform can fsync a directory
  await handle.close()
}
