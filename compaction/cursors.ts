/**
 * Named consumer cursors: a controller commits the last revision it has processed, and may later resume a
 * watch from it (revision + 1). Compaction keeps history back to the slowest cursor (policy.ts) up to
 * cursorMaxLag; a cursor beyond it is marked expired, and resuming from it fails with COMPACTED.
 * Persisted through the log's meta records, one record for all cursors.
 */
import type { Log } from '../log/backend.js'
import { compacted, futureRevision, invalid, KvlogError } from '../log/errors.js'
import type { CursorPosition } from './policy.js'

export interface Cursor extends CursorPosition {
  /** When it was last committed, ms since the epoch. */
  updatedAt: number
}

export interface CursorView extends Cursor {
  /** Revisions behind the head. */
  lag: number
}

const META = 'cursors'
const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/

/**
 * Changes apply to the in-memory map synchronously, the moment they are accepted, and are persisted in
 * order after. So compaction planning (also synchronous) always sees every accepted commit, and an expiry
 * decided from one plan can never land on a commit made after it.
 */
export class Cursors {
  private cursors = new Map<string, Cursor>()
  /** Orders the persisting writes. */
  private chain: Promise<unknown> = Promise.resolve()

  /**
   * `floor()`: the compact revision, or a compaction's target already planned but not yet scheduled
   * (compact() raises the floor asynchronously): a commit below it would be compacted right away.
   */
  constructor(
    private readonly log: Log,
    private readonly floor: () => number = () => log.compactRevision,
  ) {}

  async load(): Promise<void> {
    const stored = (await this.log.readMeta(META)) as Cursor[] | undefined
    this.cursors = new Map((stored ?? []).map((c) => [c.name, c]))
  }

  /** Cursors with their lag; one whose history was compacted away (also by hand) shows as expired. */
  list(): CursorView[] {
    const head = this.log.revision
    const floor = this.log.compactRevision
    return [...this.cursors.values()]
      .map((c) => ({ ...c, expired: c.expired || c.revision + 1 < floor, lag: head - c.revision }))
      .sort((a, b) => a.name.localeCompare(b.name))
  }

  positions(): CursorPosition[] {
    return [...this.cursors.values()].map((c) => ({ name: c.name, revision: c.revision, expired: c.expired }))
  }

  get(name: string): Cursor {
    const c = this.cursors.get(checkName(name))
    if (c === undefined) throw new KvlogError('NOT_FOUND', `no cursor named ${name}`, { cursor: name })
    return { ...c }
  }

  /** Where a watch resumes from this cursor: its revision + 1. Expired or compacted: COMPACTED. */
  resumeRevision(name: string): number {
    const c = this.get(name)
    const floor = this.log.compactRevision
    if (c.expired || c.revision + 1 < floor) {
      throw new KvlogError('COMPACTED', `cursor ${name} expired: the history after revision ${c.revision} was compacted; relist`, {
        compactRevision: floor,
        currentRevision: this.log.revision,
        cursor: name,
      })
    }
    return c.revision + 1
  }

  /** Records that the consumer processed everything up to `revision` (it may move back, not below the floor). */
  commit(name: string, revision: number): Promise<Cursor> {
    checkName(name)
    if (!Number.isSafeInteger(revision) || revision < 0) throw invalid('revision', 'must be a non-negative integer')
    if (revision > this.log.revision) throw futureRevision(revision, this.log.revision)
    const floor = Math.max(this.log.compactRevision, this.floor())
    if (revision + 1 < floor) throw compacted(revision + 1, floor, this.log.revision)
    return this.update(() => {
      const c: Cursor = { name, revision, updatedAt: Date.now(), expired: false }
      this.cursors.set(name, c)
      return c
    })
  }

  delete(name: string): Promise<void> {
    this.get(name)
    return this.update(() => {
      this.cursors.delete(name)
    })
  }

  /** Marks cursors expired, as planned from `positions` (a cursor committed since then is left alone). */
  expire(names: string[], positions: CursorPosition[]): Promise<void> {
    const planned = new Map(positions.map((p) => [p.name, p.revision]))
    return this.update(() => {
      for (const n of names) {
        const c = this.cursors.get(n)
        if (c !== undefined && planned.get(n) === c.revision) this.cursors.set(n, { ...c, expired: true })
      }
    })
  }

  /** Applies the change now; resolves once the whole map, as of then or later, is durable. */
  private update<T>(change: () => T): Promise<T> {
    const result = change()
    const run = this.chain.then(() => this.log.writeMeta(META, [...this.cursors.values()]))
    this.chain = run.catch(() => undefined)
    return run.then(() => result)
  }
}

function checkName(name: string): string {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw invalid('cursor', 'a cursor name is 1-128 characters: letters, digits, . _ : - (starting with a letter or digit)')
  }
  return name
}
