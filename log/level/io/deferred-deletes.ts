/**
 * Takes the cost of deleting LevelDB's files off LevelDB's lock.
 *
 * LevelDB (1.20, in classic-level) deletes obsolete table and write-ahead-log files while holding the
 * database mutex that every write takes. Deleting a file of several MiB costs milliseconds (the
 * filesystem frees its blocks, at a cost that grows with the file's size and with the load), so a memtable
 * flush or a compaction that drops a dozen files stalls every write for tens of milliseconds. (bench:compaction --trace: most slow puts during a compaction overlapped an unlink.)
 *
 * The fix is the hard-link trick: each table (*.ldb) and log (*.log) file gets a second name in
 * `<dir>/trash/` as soon as it appears. LevelDB's unlink then only removes a directory entry (cheap),
 * and the file's blocks are freed later, when this class removes the last name from a libuv pool thread,
 * holding no lock of LevelDB's. Freeing still costs the filesystem (with online discard, every freed block
 * is trimmed in the journal commit that the writers' fsyncs wait for), so it is paced, as RocksDB's delete
 * scheduler does: a file is truncated a chunk at a time, at most `bytesPerSecond` in all, then unlinked.
 *
 *   LevelDB creates 000123.ldb ──watch──▶ link trash/000123.ldb
 *   LevelDB deletes 000123.ldb ──watch──▶ trash/000123.ldb has 1 link left ──▶ freed, paced (off the lock)
 *
 * Best effort by design: a file deleted before it was linked is simply deleted the slow way. A periodic
 * sweep catches missed events; the trash is emptied on start (after a crash) and on close. LevelDB ignores
 * the subdirectory (it only touches files whose names it knows).
 */
import { watch, type FSWatcher } from 'node:fs'
import { link, mkdir, readdir, rm, stat, truncate, unlink } from 'node:fs/promises'
import { join } from 'node:path'

/** The files worth a second name: table files and write-ahead logs (the big ones). */
const DATA_FILE = /^\d+\.(ldb|sst|log)$/
const TRASH = 'trash'
/** How often the sweep looks for links it missed and for files LevelDB has let go. */
const SWEEP_MS = 1000
/** Largest piece of a file freed at once (smaller when the rate allows less per 1/16 s). */
const MAX_CHUNK = 4 * 1024 * 1024

export class DeferredDeletes {
  private readonly trash: string
  private watcher: FSWatcher | undefined
  private sweeper: NodeJS.Timeout | undefined
  /** File names to look at (link, or queue to free), processed one at a time. */
  private readonly pending = new Set<string>()
  private working: Promise<void> | undefined
  /** Trashed files LevelDB has let go, freed one at a time at the paced rate. */
  private readonly freeing = new Set<string>()
  private releasing: Promise<void> | undefined
  private readonly chunk: number
  private closed = false
  /** Files given a second name, and files freed from the trash, since start. */
  readonly stats = { linked: 0, freed: 0 }

  private constructor(
    private readonly dir: string,
    private readonly bytesPerSecond: number,
  ) {
    this.trash = join(dir, TRASH)
    this.chunk = bytesPerSecond > 0 ? Math.max(64 * 1024, Math.min(MAX_CHUNK, Math.floor(bytesPerSecond / 16))) : MAX_CHUNK
  }

  /**
   * Starts watching `dir` (LevelDB's directory, which must exist); frees at most `bytesPerSecond` (0: no
   * pause, still a chunk at a time). Resolves to undefined, and LevelDB keeps deleting files itself, if
   * the filesystem cannot hard-link or watch.
   */
  static async start(dir: string, bytesPerSecond: number): Promise<DeferredDeletes | undefined> {
    const d = new DeferredDeletes(dir, bytesPerSecond)
    try {
      await rm(d.trash, { recursive: true, force: true })
      await mkdir(d.trash)
      // 'rename' is a name created or deleted; 'change' (every append to the write-ahead log) is ignored.
      d.watcher = watch(dir, { persistent: false }, (event, name) => {
        if (event === 'rename' && typeof name === 'string' && DATA_FILE.test(name)) d.look(name)
      })
      d.watcher.on('error', () => d.stopWatching())
      await d.sweep()
      await d.working
    } catch (err) {
      await d.close()
      process.emitWarning(`kvlog: LevelDB's file deletes stay on its lock (${String(err)})`)
      return undefined
    }
    d.sweeper = setInterval(() => void d.sweep(), SWEEP_MS)
    d.sweeper.unref()
    return d
  }

  /** Stops watching and removes the trash (the files LevelDB still uses keep their own names). */
  async close(): Promise<void> {
    this.closed = true
    this.stopWatching()
    clearInterval(this.sweeper)
    await Promise.all([this.working, this.releasing])
    await rm(this.trash, { recursive: true, force: true })
  }

  /** Resolves once every file LevelDB has deleted so far is freed (reclaimSpace waits for this). */
  async drained(): Promise<void> {
    await this.sweep()
    while (this.working !== undefined || this.releasing !== undefined) await Promise.all([this.working, this.releasing])
  }

  /** Every data file gets a look (a link if new), and every trash entry (a reap if LevelDB let it go). */
  private async sweep(): Promise<void> {
    if (this.closed) return
    const [names, trashed] = await Promise.all([readdir(this.dir), readdir(this.trash)]).catch(() => [[], []])
    for (const name of names) if (DATA_FILE.test(name)) this.look(name)
    for (const name of trashed) this.look(name)
  }

  private look(name: string): void {
    if (this.closed) return
    this.pending.add(name)
    this.working ??= this.drain()
  }

  private async drain(): Promise<void> {
    while (!this.closed && this.pending.size > 0) {
      const name: string = this.pending.values().next().value!
      this.pending.delete(name)
      await this.settle(name).catch(() => undefined)
    }
    this.working = undefined
  }

  /** Links a live file into the trash, or queues a trashed one whose LevelDB name is gone. */
  private async settle(name: string): Promise<void> {
    const trashed = join(this.trash, name)
    const held = await stat(trashed).catch(() => undefined)
    if (held === undefined) {
      // New (or missed): give it a second name. Gone already: nothing to do.
      if (
        await link(join(this.dir, name), trashed).then(
          () => true,
          () => false,
        )
      )
        this.stats.linked++
    } else if (held.nlink === 1 && !this.freeing.has(name)) {
      this.freeing.add(name)
      this.releasing ??= this.release()
    }
  }

  private async release(): Promise<void> {
    while (!this.closed && this.freeing.size > 0) {
      const name: string = this.freeing.values().next().value!
      await this.free(join(this.trash, name)).catch(() => undefined)
      this.freeing.delete(name)
    }
    this.releasing = undefined
  }

  /** The expensive part, on pool threads and off LevelDB's lock: truncated a chunk at a time, then unlinked. */
  private async free(path: string): Promise<void> {
    let left = (await stat(path)).size
    while (left > this.chunk && !this.closed) {
      left -= this.chunk
      await truncate(path, left)
      await this.pace(this.chunk)
    }
    await unlink(path)
    this.stats.freed++
    await this.pace(left)
  }

  private async pace(bytes: number): Promise<void> {
    if (this.bytesPerSecond > 0 && bytes > 0) await new Promise((r) => setTimeout(r, (bytes / this.bytesPerSecond) * 1000))
  }

  private stopWatching(): void {
    this.watcher?.close()
    this.watcher = undefined
  }
}
