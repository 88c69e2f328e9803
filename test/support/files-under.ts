/** Every file under a folder, by its path relative to it, with its SHA-256. */
import { createHash } from 'node:crypto'
import { readFile, readdir } from 'node:fs/promises'
import { join, relative } from 'node:path'

export async function fileHashes(dir: string): Promise<Map<string, string>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  const hashes = new Map<string, string>()
  for (const e of entries.filter((e) => e.isFile())) {
    const path = join(e.parentPath, e.name)
    hashes.set(
      relative(dir, path),
      createHash('sha256')
        .update(await readFile(path))
        .digest('hex'),
    )
  }
  return hashes
}

/** The files under dir (relative paths) whose bytes contain `text`. */
export async function filesContaining(dir: string, text: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  const found: string[] = []
  for (const e of entries.filter((e) => e.isFile())) {
    const path = join(e.parentPath, e.name)
    if ((await readFile(path)).includes(text)) found.push(relative(dir, path))
  }
  return found
}
