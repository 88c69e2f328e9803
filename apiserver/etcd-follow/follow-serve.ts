/**
 * How `kvlog serve` opens its store when config.followEtcd is set: a missing or empty data dir is first
 * imported from the etcd (import-etcd.ts, with a line per phase on stderr) and marked as following; the
 * store opens without expiring leases (the etcd expires them; its deletes come through the watch); the
 * follower starts from the store's revision; the doors get the store behind the READ_ONLY gate, which
 * opens at the cutover. Cluster mode cannot follow (the cluster's log has writers of its own).
 */
import { readdir } from 'node:fs/promises'
import type { Config } from '../../config/index.js'
import { KvlogError, openLog, type LogOptions, type Replica } from '../../log/index.js'
import { EtcdFollower } from './etcd-follower.js'
import { importFromEtcd } from './import-etcd.js'
import { readOnlyUntil } from './read-only-log.js'

export interface FollowingStore {
  /** The store for every door: writes refused until the cutover. */
  store: Replica
  follower: EtcdFollower
}

export async function openFollowing(config: Config, level: LogOptions, log: (line: string) => void): Promise<FollowingStore> {
  if (config.natsUrl !== '')
    throw new KvlogError('INVALID_ARGUMENT', 'followEtcd: a cluster member cannot follow an etcd; import into a single node', {
      field: 'followEtcd',
    })
  const empty = await readdir(config.dataDir).then(
    (names) => names.length === 0,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return true
      throw err
    },
  )
  const access = {
    caFile: config.followEtcdCaFile,
    certFile: config.followEtcdCertFile,
    keyFile: config.followEtcdKeyFile,
    user: config.followEtcdUser,
  }
  if (empty) {
    log(`kvlog: importing ${config.dataDir} from etcd at ${config.followEtcd}`)
    const r = await importFromEtcd(config.followEtcd, config.dataDir, {
      access,
      settings: level,
      note: (line) => log(`kvlog: import: ${line}`),
    })
    log(`kvlog: imported revision ${r.revision} (compact revision ${r.compactRevision}, ${r.keys} keys at the floor, ${r.leases} leases)`)
  }
  const raw = await openLog({ ...level, leaseCheckInterval: 0 })
  try {
    if (empty) await EtcdFollower.mark(raw, config.followEtcd)
    const follower = await EtcdFollower.start(raw, {
      endpoints: config.followEtcd,
      access,
      statusInterval: config.followEtcdStatusInterval,
      maxBatchTxns: config.maxBatchTxns,
      leaseCheckInterval: config.leaseCheckInterval,
      log,
    })
    return { store: readOnlyUntil(raw, () => follower.writable), follower }
  } catch (err) {
    await raw.close()
    throw err
  }
}
