/**
 * Why the store did not open, when the reason is that another process holds the data directory: LevelDB
 * takes a POSIX lock on DATA_DIR/LOCK for as long as it has the database open, and a second server on the
 * same directory gets only "Database failed to open". The lock's holder is found in /proc/locks (Linux)
 * by the LOCK file's device and inode, so the message can name its PID.
 */
import { readFile, stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'

/** The error chain holds LevelDB's LEVEL_LOCKED. */
function isLocked(err: unknown): boolean {
  let e = err as { code?: unknown; cause?: unknown } | undefined
  for (let i = 0; i < 5 && e !== undefined && e !== null; i++) {
    if (e.code === 'LEVEL_LOCKED') return true
    e = e.cause as typeof e
  }
  return false
}

/** The PID holding a POSIX or flock lock on `file`, from /proc/locks; undefined when unknown. */
export async function lockHolder(file: string): Promise<number | undefined> {
  try {
    const st = await stat(file)
    const locks = await readFile('/proc/locks', 'utf8')
    // "1: POSIX  ADVISORY  WRITE 12345 08:01:1234567 0 EOF": major:minor in hex, then the inode.
    for (const line of locks.split('\n')) {
      const m = /^\d+:\s+\S+\s+\S+\s+\S+\s+(\d+)\s+([0-9a-f]+):([0-9a-f]+):(\d+)\s/.exec(line)
      if (m === null) continue
      const [, pid, major, minor, inode] = m
      if (Number(inode) === st.ino && devMatches(st.dev, parseInt(major, 16), parseInt(minor, 16))) return Number(pid)
    }
  } catch {
    // Not Linux, or the file is gone: the message goes without a PID.
  }
  return undefined
}

/** stat's device number against /proc/locks' major:minor (user space's encoding: minor's low 8 bits, major, minor's high bits). */
function devMatches(dev: number, major: number, minor: number): boolean {
  return dev === ((minor & 0xff) | (major << 8) | ((minor & ~0xff) << 12))
}

/**
 * `err` explained when the data directory is held by another process (with its PID when known);
 * otherwise `err` itself.
 */
export async function explainOpenFailure(err: unknown, dataDir: string): Promise<unknown> {
  if (!isLocked(err)) return err
  const dir = resolve(dataDir)
  const pid = await lockHolder(join(dir, 'LOCK'))
  const who = pid === undefined ? 'another process' : pid === process.pid ? 'this process' : `another process (PID ${pid})`
  return new Error(
    `the data directory ${dir} is in use by ${who}: one kvlog server per data directory. ` +
      'Stop that server, or give this one its own --data-dir',
    { cause: err },
  )
}
