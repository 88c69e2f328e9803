/**
 * The LevelDB engine as a replicator's storage (../replica.ts): a copy is a LevelLog opened with the given
 * settings and lease expiry off (the replicator expires leases through its own log), and a snapshot is
 * restored with restoreSnapshot.
 *
 * A copy's write-ahead log is never preallocated (leveldbWalPreallocateBytes): a replicator applies runs
 * of messages unsynced and syncs the last (group commit, applyReplicated's `sync`), and unsynced writes
 * into allocated space can reach the disk out of order, so after a power cut the copy could hold a later
 * message without an earlier one, which is not a prefix of the log. Appended, a torn log ends early. The wiring hands this to the cluster engine; log/jetstream/ never names it.
 */
import type { Replica, ReplicaStorage } from '../replica.js'
import { openLevelLog } from './level-log.js'
import type { LevelLogOptions } from './options.js'
import { restoreSnapshot } from './snapshot.js'

export function levelReplicaStorage(options: Partial<LevelLogOptions> & { dir: string }): ReplicaStorage {
  return {
    dir: options.dir,
    open: (dir: string): Promise<Replica> => openLevelLog({ ...options, dir, leaseCheckInterval: 0, leveldbWalPreallocateBytes: 0 }),
    restore: async (chunks, dir, progress) => {
      await restoreSnapshot(chunks, dir, progress)
    },
  }
}
