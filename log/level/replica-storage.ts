/**
 * The LevelDB engine as a replicator's storage (../replica.ts): a copy is a LevelLog opened with the given
 * settings and lease expiry off (the replicator expires leases through its own log), and a snapshot is
 * restored with restoreSnapshot. The wiring hands this to the cluster engine; log/jetstream/ never names it.
 */
import type { Replica, ReplicaStorage } from '../replica.js'
import { openLevelLog } from './level-log.js'
import type { LevelLogOptions } from './options.js'
import { restoreSnapshot } from './snapshot.js'

export function levelReplicaStorage(options: Partial<LevelLogOptions> & { dir: string }): ReplicaStorage {
  return {
    dir: options.dir,
    open: (dir: string): Promise<Replica> => openLevelLog({ ...options, dir, leaseCheckInterval: 0 }),
    restore: async (chunks, dir, progress) => {
      await restoreSnapshot(chunks, dir, progress)
    },
  }
}
