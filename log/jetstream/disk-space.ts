/**
 * The free space a member keeps on its copy's filesystem (clusterDiskReserve). The applier asks room()
 * before it applies a message: below the reserve it waits, asking again every second, instead of letting
 * LevelDB's write fail with ENOSPC, which would stop the copy for good (the writer stops on a failed
 * batch, since what reached the disk is unknown; log/level/writer.ts). Meanwhile the member is not ready
 * (JetStreamLog.caughtUp) and the others acknowledge writes without it; once there is room again it
 * applies on from where it stopped.
 *
 * The filesystem is asked at most once a second while there is room, so the check costs the applier
 * nothing per message.
 */
import { statfs } from 'node:fs/promises'

const CHECK_EVERY_MS = 1000

export class DiskSpace {
  /** Whether the last check found less than the reserve free. */
  full = false
  private checkedAt = 0

  constructor(
    private readonly dir: string,
    /** Bytes; 0 = never checked. */
    private readonly reserve: number,
    private readonly say: (line: string) => void,
    private readonly closed: () => boolean,
  ) {}

  /** Resolves once the copy's filesystem has the reserve free (at once if it had at the last check). */
  async room(): Promise<void> {
    if (this.reserve === 0 || (!this.full && Date.now() - this.checkedAt < CHECK_EVERY_MS)) return
    for (;;) {
      const free = await this.free()
      this.checkedAt = Date.now()
      if (free >= this.reserve || this.closed()) {
        if (this.full) this.say(`kvlog: ${this.dir} has ${free} bytes free again; applying the log`)
        this.full = false
        return
      }
      if (!this.full) {
        this.say(
          `kvlog: ${this.dir} has ${free} bytes free, below clusterDiskReserve (${this.reserve}): not applying the log until there is room`,
        )
      }
      this.full = true
      await new Promise((r) => setTimeout(r, CHECK_EVERY_MS))
    }
  }

  private async free(): Promise<number> {
    // A filesystem that cannot be asked counts as having room: the write itself then says what is wrong.
    const s = await statfs(this.dir).catch(() => undefined)
    return s === undefined ? Number.POSITIVE_INFINITY : s.bavail * s.bsize
  }
}
