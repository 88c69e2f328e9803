/**
 * The imports' target directory: it must be missing or empty, and a store is built in a new directory
 * beside it (same parent, so the final rename is atomic) and renamed into place only once complete. Any
 * failure removes what was built, so the target is either as it was or holds the whole store.
 */
import { mkdir, mkdtemp, readdir, rename, rm, rmdir } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { KvlogError } from '../log/errors.js'

/** `target` (an absolute path) must be missing or an empty directory. */
export async function checkTarget(target: string): Promise<void> {
  const existing = await readdir(target).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return []
    if (err.code === 'ENOTDIR') throw new KvlogError('INVALID_ARGUMENT', `${target} is not a directory`, { field: 'dataDir' })
    throw err
  })
  if (existing.length > 0)
    throw new KvlogError('INVALID_ARGUMENT', `${target} is not empty: import writes a fresh data directory`, { field: 'dataDir' })
}

/**
 * An import killed mid-way (SIGKILL, a crash) leaves its work directory beside the target: it is removed
 * and the import starts over from scratch, saying so through `note`. (Only a complete store is ever renamed
 * to the target.)
 */
export async function removeInterrupted(target: string, note?: (line: string) => void): Promise<void> {
  const prefix = `.${basename(target)}.import-`
  const names = await readdir(dirname(target)).catch(() => [] as string[])
  for (const name of names.filter((n) => n.startsWith(prefix))) {
    await rm(join(dirname(target), name), { recursive: true, force: true })
    note?.(`removed ${name}, left by an interrupted import of ${target}; starting over from scratch`)
  }
}

/** Runs `build` on a new directory beside `target`, then moves it to `target` (still missing or empty). */
export async function buildInPlace<T>(target: string, build: (work: string) => Promise<T>): Promise<T> {
  await mkdir(dirname(target), { recursive: true })
  const work = await mkdtemp(join(dirname(target), `.${basename(target)}.import-`))
  try {
    const result = await build(work)
    await checkTarget(target)
    await rmdir(target).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err
    })
    await rename(work, target)
    return result
  } catch (err) {
    await rm(work, { recursive: true, force: true })
    throw err
  }
}
