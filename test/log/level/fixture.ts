/**
 * LevelLog as a conformance-suite fixture (test/log/conformance/): a fresh log in a temp dir, opened with the
 * suite's limits, reopenable on the same directory, removed afterwards. Another engine plugs into the suite
 * by providing the same kind of factory.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Log } from '../../../log/backend.js'
import { openLevelLog } from '../../../log/level/level-log.js'
import { DEFAULT_LEVEL_LOG_OPTIONS, type LevelLogOptions } from '../../../log/level/options.js'
import { DEFAULT_LIMITS, type OpenLog } from '../conformance/suite.js'

async function closeQuietly(log: Log): Promise<void> {
  try {
    await log.close()
  } catch {
    // already closed (the close tests do that themselves)
  }
}

export function levelLogFactory(fsync: LevelLogOptions['fsync']): OpenLog {
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), `kvlog-conformance-${fsync}-`))
    const options: LevelLogOptions = {
      ...DEFAULT_LEVEL_LOG_OPTIONS,
      dir,
      fsync,
      segmentMaxEntries: DEFAULT_LIMITS.segmentMaxEntries,
      maxTxnOps: DEFAULT_LIMITS.maxTxnOps,
      maxRequestBytes: DEFAULT_LIMITS.maxRequestBytes,
      compactionBatchRevisions: 3,
      leaseMinTtl: DEFAULT_LIMITS.leaseMinTtl,
      leaseCheckInterval: 50,
    }
    let log: Log = await openLevelLog(options)
    return {
      log,
      reopen: async () => {
        await closeQuietly(log)
        log = await openLevelLog(options)
        return log
      },
      cleanup: async () => {
        await closeQuietly(log)
        await rm(dir, { recursive: true, force: true })
      },
    }
  }
}
