/**
 * kvlog's log, in-process: open a log on a directory (openLog) and use it through the Log contract
 * (backend.ts) or, to apply writes decided elsewhere, the replication contract (replica.ts). This is the
 * documented entry point for programs that embed the store; everything else under log/ is internal and
 * may change. No engine is named here: only the wiring (apiserver/server.ts, apiserver/main.ts) and the
 * offline tools that build a data directory name one (docs/architecture.md).
 */
export { DEFAULT_LOG_OPTIONS, logOptions, openLog, restoreSnapshot, type LogOptions } from './level/open.js'
export type { AlarmKind, DeleteOptions, DeleteResponse, Log, PutOptions, PutResponse, WriteResult } from './backend.js'
export {
  CLUSTER_RECORDS,
  type Replica,
  type ReplicaRecord,
  type ReplicaStorage,
  type ReplicatedResult,
  type ReplicatedWrite,
} from './replica.js'
export type * from './types.js'
export { ALL_ERROR_CODES, ERROR_CODES, isKvlogError, KvlogError, type ErrorCode, type ErrorDetails } from './errors.js'
export { prefixEnd } from './keys.js'
