/**
 * etcd's alarms: one entry per (member id, alarm), as the Alarm RPC activates them (member 0 is a valid
 * id: etcdctl and operators use it to mean "the cluster"), kept in the store's metadata so they survive
 * restarts. NOSPACE is also the log's own alarm: an entry for it puts the log in read-and-delete-only
 * mode; the log raising it by itself (over the quota) shows as an entry for this member; deactivating
 * the last NOSPACE entry lifts the log's alarm.
 */
import type { Log } from '../../log/backend.js'

/** What the alarm entries are kept through: the log as a caller, or as the server itself. */
export type AlarmLog = Pick<Log, 'readMeta' | 'writeMeta' | 'setAlarm' | 'alarms'>
import { ALARM_TYPE } from './proto.js'

export const ALARM_NAMES = ['NOSPACE', 'CORRUPT'] as const
export type AlarmName = (typeof ALARM_NAMES)[number]

export interface AlarmEntry {
  /** uint64 as a decimal string. */
  memberID: string
  alarm: AlarmName
}

const ALARMS_RECORD = 'etcd/alarms'

export function alarmMessage(a: AlarmEntry): { memberID: string; alarm: number } {
  return { memberID: a.memberID, alarm: ALARM_TYPE[a.alarm] }
}

export class Alarms {
  private entries: AlarmEntry[] | undefined

  /**
   * Each call takes the log as its caller (a change needs role root: auth/guarded-log.ts). In a cluster the
   * record also changes through other members: `onMeta` reloads it, so every member lists the same entries.
   */
  constructor(
    private readonly memberId: string,
    onMeta?: (listener: (name: string, value: unknown) => void) => void,
  ) {
    onMeta?.((name, value) => {
      if (name === ALARMS_RECORD) this.entries = (value as AlarmEntry[] | undefined) ?? []
    })
  }

  /** Every active alarm, in activation order. */
  async list(log: AlarmLog): Promise<AlarmEntry[]> {
    const entries = await this.load(log)
    if (log.alarms().includes('NOSPACE') && !entries.some((e) => e.alarm === 'NOSPACE')) {
      return [...entries, { memberID: this.memberId, alarm: 'NOSPACE' }]
    }
    return entries
  }

  /** Activates (memberID, alarm); answers the entry (new or already there), as etcd does. */
  async activate(log: AlarmLog, memberID: string, alarm: AlarmName): Promise<AlarmEntry> {
    const entries = await this.load(log)
    const found = entries.find((e) => e.memberID === memberID && e.alarm === alarm)
    if (found !== undefined) return found
    const entry = { memberID, alarm }
    await this.save(log, [...entries, entry])
    if (alarm === 'NOSPACE') await log.setAlarm('NOSPACE', true)
    return entry
  }

  /** Deactivates (memberID, alarm); undefined when it was not active (etcd answers no alarm then). */
  async deactivate(log: AlarmLog, memberID: string, alarm: AlarmName): Promise<AlarmEntry | undefined> {
    const entries = await this.list(log)
    const found = entries.find((e) => e.memberID === memberID && e.alarm === alarm)
    if (found === undefined) return undefined
    const rest = entries.filter((e) => e !== found)
    await this.save(
      log,
      rest.filter((e) => this.stored(e)),
    )
    if (alarm === 'NOSPACE' && !rest.some((e) => e.alarm === 'NOSPACE')) await log.setAlarm('NOSPACE', false)
    return found
  }

  private stored(e: AlarmEntry): boolean {
    return this.entries?.includes(e) === true
  }

  private async load(log: AlarmLog): Promise<AlarmEntry[]> {
    this.entries ??= ((await log.readMeta(ALARMS_RECORD)) as AlarmEntry[] | undefined) ?? []
    return this.entries
  }

  private async save(log: AlarmLog, entries: AlarmEntry[]): Promise<void> {
    await log.writeMeta(ALARMS_RECORD, entries)
    this.entries = entries
  }
}
