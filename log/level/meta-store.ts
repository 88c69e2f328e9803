/**
 * Small durable records beside the log, for layers above it (compaction/ keeps consumer cursors here) and
 * for the log's own alarms. Values are msgpack-encoded; writes go through the writer queue like
 * everything else, so they are ordered with the data and durable when the promise resolves.
 *
 * Alarms (etcd's): NOSPACE is raised when the database stays over its quota after compaction. While it
 * is active the log refuses writes that add data (any put) with NO_SPACE; reads and deletes work.
 */
import { Packr } from 'msgpackr'
import { metaKey } from './keyspace.js'
import type { Db } from './latest-view.js'
import type { Writer } from './writer.js'

export const packr = new Packr({ useRecords: false })
/** readMeta/writeMeta names live under this prefix of the meta keyspace. */
export const META_EXT_PREFIX = 'ext/'
const ALARMS_KEY = metaKey('alarms')

export type AlarmKind = 'NOSPACE'

export class MetaStore {
  private active = new Set<AlarmKind>()

  constructor(
    private readonly db: Db,
    private readonly writer: Writer,
  ) {}

  async load(): Promise<void> {
    const bytes = await this.db.get(ALARMS_KEY)
    if (bytes !== undefined) this.active = new Set(packr.unpack(bytes) as AlarmKind[])
  }

  async read(name: string): Promise<unknown> {
    const bytes = await this.db.get(metaKey(META_EXT_PREFIX + name))
    return bytes === undefined ? undefined : packr.unpack(bytes)
  }

  /** Writes (or with undefined, removes) a record; resolves when durable. */
  write(name: string, value: unknown): Promise<void> {
    const key = metaKey(META_EXT_PREFIX + name)
    return this.writer.submitRaw(() => [value === undefined ? { type: 'del', key } : { type: 'put', key, value: packr.pack(value) }])
  }

  alarms(): AlarmKind[] {
    return [...this.active]
  }

  hasAlarm(kind: AlarmKind): boolean {
    return this.active.has(kind)
  }

  async setAlarm(kind: AlarmKind, on: boolean): Promise<void> {
    if (this.active.has(kind) === on) return
    const next = new Set(this.active)
    if (on) next.add(kind)
    else next.delete(kind)
    await this.writer.submitRaw(() => [{ type: 'put', key: ALARMS_KEY, value: packr.pack([...next]) }])
    this.active = next
  }
}
