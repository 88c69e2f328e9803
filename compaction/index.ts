/**
 * compaction/: bounded history. Policies (policy.ts), the background compactor (auto-compactor.ts) and
 * consumer cursors (cursors.ts), over the log's compaction primitive (log/level/compaction/compactor.ts).
 */
import { ConfigError, type Config } from '../config/index.js'
import type { Log } from '../log/backend.js'
import { AutoCompactor } from './auto-compactor.js'
import { Cursors } from './cursors.js'
import { parseRetention, type RetentionPolicy } from './policy.js'

export { AutoCompactor, type CompactionRun, type CompactionStats } from './auto-compactor.js'
export { Cursors, type Cursor, type CursorView } from './cursors.js'
export { parseRetention, planFloor, type FloorPlan, type RetentionPolicy } from './policy.js'

export function retentionPolicy(config: Config): RetentionPolicy {
  let parsed: { revisions: number; durationMs: number }
  try {
    parsed = parseRetention(config.autoCompactionMode, config.autoCompactionRetention)
  } catch (err) {
    throw new ConfigError((err as Error).message, 'autoCompactionRetention', 'flag', '--auto-compaction-retention')
  }
  return {
    mode: config.autoCompactionMode,
    ...parsed,
    quotaBytes: config.quotaBackendBytes,
    minRetain: config.compactionMinRetain,
    maxCursorLag: config.cursorMaxLag,
  }
}

export interface Compaction {
  cursors: Cursors
  compactor: AutoCompactor
  /** Stops the checks (call before closing the log, which stops a compaction in progress). */
  stop(): void
}

/** Loads the cursors and starts the background compactor (`policy` from retentionPolicy(config)). */
export async function startCompaction(
  log: Log,
  config: Config,
  policy: RetentionPolicy,
  onError: (err: unknown) => void,
): Promise<Compaction> {
  const late: { compactor?: AutoCompactor } = {}
  const cursors = new Cursors(log, () => late.compactor?.pendingFloor() ?? 0)
  await cursors.load()
  const compactor = new AutoCompactor(log, cursors, policy, config.compactionCheckInterval, onError)
  late.compactor = compactor
  compactor.start()
  return { cursors, compactor, stop: () => compactor.stop() }
}
