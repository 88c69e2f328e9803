/**
 * Refcounted LevelDB snapshots, one per committed batch.
 *
 * The writer calls advance(rev) right after a batch is durable and before it starts the next one, so the
 * snapshot holds exactly the state at `rev`: every read is labelled with the revision it really saw. A
 * snapshot is closed when it is no longer current and its last reader released it.
 *
 * A LevelDB snapshot keeps what it saw readable through later writes, but not through a dropped table
 * file (dropFilesInRange): before the compactor drops files, released() waits for the readers of the
 * older views to finish.
 */
import type { Db, Snapshot } from './latest-view.js'

export interface ReadView {
  readonly revision: number
  readonly snapshot: Snapshot
  refs: number
}

export class ReadViews {
  private current: ReadView
  /** Views no longer current that readers still hold. */
  private readonly held = new Set<ReadView>()
  /** released() calls waiting for some of `held` to go. */
  private waiters: Array<{ pending: Set<ReadView>; done: () => void }> = []

  constructor(
    private readonly db: Db,
    revision: number,
  ) {
    this.current = { revision, snapshot: db.snapshot(), refs: 0 }
  }

  get revision(): number {
    return this.current.revision
  }

  acquire(): ReadView {
    this.current.refs++
    return this.current
  }

  release(view: ReadView): void {
    view.refs--
    if (view.refs === 0 && view !== this.current) {
      close(view)
      this.forget(view)
    }
  }

  /** Makes the database's present state the current view, labelled `revision`. */
  advance(revision: number): void {
    const old = this.current
    this.current = { revision, snapshot: this.db.snapshot(), refs: 0 }
    if (old.refs === 0) close(old)
    else this.held.add(old)
  }

  /** Resolves once every view older than the current one has been released by its readers. */
  released(): Promise<void> {
    if (this.held.size === 0) return Promise.resolve()
    return new Promise((done) => this.waiters.push({ pending: new Set(this.held), done }))
  }

  private forget(view: ReadView): void {
    if (!this.held.delete(view)) return
    this.waiters = this.waiters.filter((w) => {
      w.pending.delete(view)
      if (w.pending.size > 0) return true
      w.done()
      return false
    })
  }

  /** Closes the current view (readers still holding older ones close them on release). */
  closeAll(): Promise<void> {
    return this.current.snapshot.close()
  }
}

function close(view: ReadView): void {
  // Closing only fails if the database is already closed, which closes every snapshot anyway.
  view.snapshot.close().catch(() => undefined)
}
