/**
 * Writes LevelDB's table files out to disk a little at a time while LevelDB writes them, as RocksDB's
 * `bytes_per_sync` does, so that the writers' fsyncs do not queue behind one large burst.
 *
 * LevelDB (1.20, in classic-level) writes a table file (a flushed memtable, or a compaction's output)
 * through the page cache and syncs it once, when the file is complete. A flush of the 32 MiB memtable
 * thus sends the whole memtable to the disk at once, and every write-ahead-log fsync the writers issue
 * meanwhile waits behind it. Syncing the growing files every tableSyncInterval about halves the slowest
 * synced put after a flush begins (`npm run bench:flush-stall`; docs/benchmarks.md has the figures).
 *
 *   LevelDB appends 000123.ldb ──watch: 'change'──▶ dirty ──every intervalMs──▶ fdatasync(000123.ldb)
 *
 * fdatasync acts on the file, whichever descriptor it is called on, so a descriptor of our own (opened
 * read-only, on a libuv pool thread) flushes LevelDB's pages. Nothing of LevelDB's changes: its own sync at
 * the end of the file still runs and is what makes the file durable; it only finds less left to write.
 * Best effort: a file deleted before its turn is skipped, and a directory that cannot be watched leaves
 * LevelDB as it is.
 */
import { watch, type FSWatcher } from 'node:fs'
import { open } from 'node:fs/promises'
import { join } from 'node:path'

const TABLE_FILE = /^\d+\.(ldb|sst)$/

export class TableWriteback {
  /** Table files appended to since their last sync. */
  private readonly dirty = new Set<string>()
  private watcher: FSWatcher | undefined
  private timer: NodeJS.Timeout | undefined
  private pass: Promise<void> | undefined
  private closed = false
  /** fdatasync calls made since start. */
  readonly stats = { syncs: 0 }

  private constructor(private readonly dir: string) {}

  /** Starts watching `dir` (LevelDB's directory, which must exist); undefined if intervalMs is 0 or it cannot watch. */
  static start(dir: string, intervalMs: number): TableWriteback | undefined {
    if (intervalMs <= 0) return undefined
    const w = new TableWriteback(dir)
    try {
      w.watcher = watch(dir, { persistent: false }, (_event, name) => {
        if (typeof name === 'string' && TABLE_FILE.test(name)) w.dirty.add(name)
      })
    } catch (err) {
      process.emitWarning(`kvlog: LevelDB's table files are synced only by LevelDB (${String(err)})`)
      return undefined
    }
    w.watcher.on('error', () => w.stopWatching())
    w.timer = setInterval(() => {
      // One pass at a time: a slow disk makes passes further apart, never concurrent.
      if (w.pass === undefined && w.dirty.size > 0) w.pass = w.syncDirty()
    }, intervalMs)
    w.timer.unref()
    return w
  }

  /** Stops watching and waits for a pass in progress. */
  async close(): Promise<void> {
    this.closed = true
    this.stopWatching()
    clearInterval(this.timer)
    this.dirty.clear()
    await this.pass
  }

  private stopWatching(): void {
    this.watcher?.close()
    this.watcher = undefined
  }

  private async syncDirty(): Promise<void> {
    try {
      const names = [...this.dirty]
      this.dirty.clear()
      for (const name of names) {
        if (this.closed) break
        // ENOENT: LevelDB deleted it (a compaction's input) before its turn; nothing to write.
        const file = await open(join(this.dir, name), 'r').catch(() => undefined)
        if (file === undefined) continue
        // Best effort: LevelDB's own sync at the end of the file reports real I/O errors.
        if (
          await file.datasync().then(
            () => true,
            () => false,
          )
        )
          this.stats.syncs++
        await file.close().catch(() => undefined)
      }
    } finally {
      this.pass = undefined
    }
  }
}
