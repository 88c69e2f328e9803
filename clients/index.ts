/**
 * kvlog's TypeScript client: `import { KvlogClient } from 'kvlog'`. See README.md for examples.
 * Imports nothing from the server side.
 */
export { KvlogClient, type ClientOptions, type CursorInfo, type LeaseGrant, type LeaseTimeToLive, type SnapshotDownload, type HistoryOptions, type HistoryResult, type KeyRange, type RangeOptions, type RangeResult, type TxnRequest, type TxnResult } from './client.js'
export type { Bytes, HistoryEvent, KeyValue, LeaseId, WatchEvent } from './codec.js'
export { CompactedError, KvlogClientError, OutcomeUnknownError, UnreachableError, type ErrorCode } from './errors.js'
export { Watch, type WatchBatch, type WatchOptions } from './watch.js'
