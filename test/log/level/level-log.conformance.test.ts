/** Runs the log conformance suite against LevelLog, with fsync 'always' and 'never', on tiny limits. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Log } from '../../../log/backend.js'
import { openLevelLog } from '../../../log/level/level-log.js'
import { DEFAULT_LEVEL_LOG_OPTIONS, type LevelLogOptions } from '../../../log/level/options.js'
import { DEFAULT_LIMITS, logConformanceSuite, type LogFixture } from '../conformance/suite.js'

async function closeQuietly(log: Log): Promise<void> {
  try {
    await log.close()
  } catch {
    // already closed (the close tests do that themselves)
  }
}

function levelLogFactory(fsync: LevelLogOptions['fsync']): () => Promise<LogFixture> {
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

logConformanceSuite('LevelLog (fsync always)', levelLogFactory('always'))
logConformanceSuite('LevelLog (fsync never)', levelLogFactory('never'))
