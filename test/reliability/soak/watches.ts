/**
 * Watches as a careful client keeps them, recorded for the watch checker: logical watches spread over a
 * few connections ("slots"); when a connection drops (a fault, a restart) the slot reconnects and every
 * watch on it resumes from its last seen revision + 1 (a new segment); a COMPACTED cancel ends the
 * logical watch and the client relists and starts a new one from the list's revision + 1.
 */
import type { LogicalWatch, WatchSegment } from '../../apiserver/watch/checker.js'
import { sleep, type Received } from '../../support/watch-client.js'
import type { WatchSpec } from '../../support/watch-specs.js'
import type { Door, Driver, WatchConn } from '../drivers/types.js'

export type Spec = WatchSpec

interface Logical extends LogicalWatch {
  spec: Spec
  resumeFrom: number
  slot: Slot
  ended: boolean
}

interface Slot {
  name: string
  door: Door
  conn: WatchConn | undefined
  ids: Map<number, Logical>
  watches: Set<Logical>
  /** While set, a dropped slot waits for it before reconnecting (to resume below a later compaction). */
  hold: Promise<void> | undefined
}

export interface WatchStats {
  relists: number
  compactedCancels: number
  otherCancels: string[]
  connections: number
}

export class WatchPool {
  readonly logicals: Logical[] = []
  readonly stats: WatchStats = { relists: 0, compactedCancels: 0, otherCancels: [], connections: 0 }
  private readonly slots: Slot[] = []
  private readonly pending = new Set<Promise<void>>()
  private finished = false
  private runs: Promise<void>[] = []

  /** `relister` reads the current revision of a selection (a relist) through some door. */
  constructor(private readonly relister: Driver) {}

  addSlot(name: string, door: Door): void {
    const slot: Slot = { name, door, conn: undefined, ids: new Map(), watches: new Set(), hold: undefined }
    this.slots.push(slot)
    this.runs.push(this.runSlot(slot))
  }

  get watches(): LogicalWatch[] {
    return this.logicals
  }

  /** Adds a logical watch from `start` on slot `index` (modulo the slots whose door can carry it). */
  add(name: string, spec: Spec, start: number, index: number): void {
    const slots = this.slots.filter((s) => s.door.watches(spec))
    if (slots.length === 0) throw new TypeError(`no watch slot's door can carry ${JSON.stringify(spec)}`)
    const slot = slots[index % slots.length]
    const l: Logical = { name, spec, segments: [], resumeFrom: start, slot, ended: false }
    this.logicals.push(l)
    slot.watches.add(l)
    if (slot.conn?.isOpen) this.startSegment(slot, slot.conn, l)
  }

  /** Drops a slot's connection; with `hold`, it reconnects only once `hold` resolves. */
  drop(index: number, hold?: Promise<void>): void {
    const slot = this.slots[index % this.slots.length]
    if (slot.conn === undefined) return
    if (hold !== undefined && slot.hold === undefined) slot.hold = hold
    slot.conn.terminate()
  }

  get size(): number {
    return this.slots.length
  }

  requestProgress(): void {
    for (const s of this.slots) if (s.conn?.isOpen) s.conn.requestProgress()
  }

  /** Whether every live logical watch has seen `revision` (an event or a progress notice). */
  caughtUp(revision: number): boolean {
    return this.pending.size === 0 && this.logicals.every((l) => l.ended || l.resumeFrom > revision)
  }

  behind(revision: number): string[] {
    return this.logicals.filter((l) => !l.ended && l.resumeFrom <= revision).map((l) => `${l.name} at ${l.resumeFrom}`)
  }

  async stop(): Promise<void> {
    await Promise.all([...this.pending])
    this.finished = true
    for (const s of this.slots) s.conn?.terminate()
    await Promise.all(this.runs)
  }

  private startSegment(slot: Slot, conn: WatchConn, l: Logical): void {
    const id = conn.allocateId()
    const segment: WatchSegment = { startRevision: l.resumeFrom, messages: conn.messagesFor(id), label: `${conn.label}#${id}` }
    l.segments.push(segment)
    slot.ids.set(id, l)
    conn.create({ ...l.spec, startRevision: l.resumeFrom, id })
  }

  private onMessage(slot: Slot, conn: WatchConn, rec: Received): void {
    const m = rec.msg
    if (typeof m.id !== 'number' || slot.conn !== conn) return
    const l = slot.ids.get(m.id)
    if (l === undefined) return
    if ((m.type === 'events' || m.type === 'progress') && typeof m.revision === 'number') {
      l.resumeFrom = Math.max(l.resumeFrom, m.revision + 1)
    } else if (m.type === 'canceled') {
      l.ended = true
      slot.watches.delete(l)
      slot.ids.delete(m.id)
      if (m.code === 'COMPACTED') {
        this.stats.compactedCancels++
        const p = this.relist(l).finally(() => this.pending.delete(p))
        this.pending.add(p)
      } else {
        this.stats.otherCancels.push(`${l.name}: ${JSON.stringify(m)}`)
      }
    } else if (m.type === 'error') {
      this.stats.otherCancels.push(`${l.name}: ${JSON.stringify(m)}`)
    }
  }

  /** Like a client after COMPACTED: read the current revision, then watch again from the next one. */
  private async relist(old: Logical): Promise<void> {
    this.stats.relists++
    const sel = {
      keyBase64: Buffer.from(old.spec.key ?? '', 'utf8').toString('base64'),
      prefix: old.spec.prefix,
      fromKey: old.spec.fromKey,
    }
    if (old.spec.keyBase64 !== undefined) sel.keyBase64 = old.spec.keyBase64
    for (let attempt = 0; attempt < 600; attempt++) {
      try {
        const r = await this.relister.execute({ type: 'range', sel })
        const slots = this.slots.filter((s) => s.door.watches(old.spec))
        this.add(`${old.name}'`, old.spec, r.revision + 1, slots.indexOf(old.slot))
        return
      } catch {
        await sleep(100)
      }
    }
  }

  private async runSlot(slot: Slot): Promise<void> {
    let n = 0
    while (!this.finished) {
      let conn: WatchConn
      try {
        conn = await slot.door.connectWatch(`${slot.name}.${n++}`)
      } catch {
        await sleep(50)
        continue
      }
      if (this.finished) {
        conn.terminate()
        break
      }
      this.stats.connections++
      slot.ids = new Map()
      slot.conn = conn
      conn.onMessage((rec) => this.onMessage(slot, conn, rec))
      for (const l of slot.watches) this.startSegment(slot, conn, l)
      await conn.closed
      if (slot.conn === conn) slot.conn = undefined
      if (slot.hold !== undefined) {
        await slot.hold
        slot.hold = undefined
      }
    }
  }
}
