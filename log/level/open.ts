/**
 * What log/index.ts offers of the LevelDB engine, none of it naming the engine's class: a log opened on a
 * directory, seen through the replication contract (../replica.ts, which extends the Log contract), the
 * settings it reads, and restoreSnapshot (a snapshot stream back into a data directory).
 */
import type { Replica } from '../replica.js'
import { openLevelLog } from './level-log.js'
import { DEFAULT_LEVEL_LOG_OPTIONS, levelLogOptions, type LevelLogOptions } from './options.js'

/** The settings of a log on one directory (config/schema.ts documents each), and the directory. */
export type LogOptions = LevelLogOptions

/** Opens the log in `options.dir` (created if missing); settings left out take their documented default. */
export function openLog(options: Partial<LogOptions> & { dir: string }): Promise<Replica> {
  return openLevelLog(options)
}

/** The settings of a log out of a full Config, on config.dataDir. */
export const logOptions = levelLogOptions

/** Every setting at its default (config/schema.ts). */
export const DEFAULT_LOG_OPTIONS = DEFAULT_LEVEL_LOG_OPTIONS

export { restoreSnapshot } from './snapshot.js'
