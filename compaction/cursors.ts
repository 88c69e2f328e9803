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

export class Cursors {
  private cursors = new Map<string, Cursor>()
  /** Serializes read-modify-write of the record. */
  private chain: Promise<unknown> = Promise.resolve()

  constructor(private readonly log: Log) {}

  async load(): Promise<void> {
    const stored = (await this.log.readMeta(META)) as Cursor[] | undefined
    this.cursors = new Map((stored ?? []).map((c) => [c.name, c]))
  }

  list(): CursorView[] {
    const head = this.log.revision
    return [...this.cursors.values()].map((c) => ({ ...c, lag: head - c.revision })).sort((a, b) => a.name.localeCompare(b.name))
  }

  positions(): CursorPosition[] {
    return [...this.cursors.values()]
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
        compactRevision: floor, currentRevision: this.log.revision, cursor: name,
      })
    }
    return c.revision + 1
  }

  /** Records that the consumer processed everything up to `revision` (it may move back, not below the floor). */
  commit(name: string, revision: number): Promise<Cursor> {
    checkName(name)
    if (!Number.isSafeInteger(revision) || revision < 0) throw invalid('revision', 'must be a non-negative integer')
    if (revision > this.log.revision) throw futureRevision(revision, this.log.revision)
    if (revision + 1 < this.log.compactRevision) throw compacted(revision + 1, this.log.compactRevision, this.log.revision)
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

  expire(names: string[]): Promise<void> {
    if (names.length === 0) return Promise.resolve()
    return this.update(() => {
      for (const n of names) {
        const c = this.cursors.get(n)
        if (c !== undefined) this.cursors.set(n, { ...c, expired: true })
      }
    })
  }

  private update<T>(change: () => T): Promise<T> {
    const run = this.chain.then(async () => {
      const result = change()
      await this.log.writeMeta(META, [...this.cursors.values()])
      return result
    })
    this.chain = run.catch(() => undefined)
    return run
  }
}

function checkName(name: string): string {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw invalid('cursor', 'a cursor name is 1-128 characters: letters, digits, . _ : - (starting with a letter or digit)')
  }
  return name
}
