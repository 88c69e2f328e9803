/**
 * kvlog's log, in-process: open a LevelDB-backed log on a directory and use it through the Log contract
 * (backend.ts). This is the documented entry point for programs that embed the store; everything else under
 * log/ is internal and may change.
 */
export { openLevelLog, type LevelLog, type ReplicatedWrite } from './level/level-log.js'
export { restoreSnapshot } from './level/snapshot.js'
export { DEFAULT_LEVEL_LOG_OPTIONS, levelLogOptions, type LevelLogOptions } from './level/options.js'
export type { AlarmKind, DeleteOptions, DeleteResponse, Log, PutOptions, PutResponse, WriteResult } from './backend.js'
export type * from './types.js'
export { ALL_ERROR_CODES, ERROR_CODES, isKvlogError, KvlogError, type ErrorCode, type ErrorDetails } from './errors.js'
export { prefixEnd } from './keys.js'
export { readMetaRecords, StoreImport, type ImportedLease, type ImportedWrite } from './level/import.js'
