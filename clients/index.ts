/**
 * kvlog's TypeScript client: `import { KvlogClient } from 'kvlog'`. See README.md for examples.
 * Imports nothing from the server side.
 */
export {
  KvlogClient,
  type ClientOptions,
  type CursorInfo,
  type LeaseGrant,
  type LeaseTimeToLive,
  type SnapshotDownload,
  type HistoryOptions,
  type HistoryResult,
  type RangeOptions,
  type RangeResult,
  type RevertChange,
  type RevertResult,
  type TxnRequest,
  type TxnResult,
} from './client.js'
export { AuthApi, type AuthStatus, type Permission, type PermissionType } from './auth-api.js'
export type { Credentials } from './auth.js'
export type { TlsOptions } from './tls.js'
export type { Bytes, HistoryEvent, KeyRange, KeyValue, LeaseId, WatchEvent } from './codec.js'
export type { Author, EventJson, EventType, KeyValueJson } from '../wire/native-api.js'
export {
  CompactedError,
  KvlogClientError,
  OutcomeUnknownError,
  StatusError,
  UnreachableError,
  WrongEndpointError,
  isReason,
  type ErrorCode,
} from './errors.js'
export { Watch, type WatchBatch, type WatchOptions } from './watch.js'

// The resource API (Kubernetes-style) and the informer.
export { ResourceClient, type ListOptions, type ResourceClientOptions, type ResourceType, type Selection } from './resources/http.js'
export { ResourceWatch, type ResourceWatchOptions } from './resources/watch.js'
export { JsonObjectStream, MalformedStreamError } from './resources/json-stream.js'
export {
  isStatus,
  objectKey,
  splitKey,
  type KubeObject,
  type ListMeta,
  type ObjectList,
  type ObjectMeta,
  type ResourceWatchEvent,
  type Status,
  type WatchEventType,
} from './resources/types.js'
export { Informer, type EventHandler, type InformerOptions } from './informer/informer.js'
export { Store } from './informer/store.js'
export { DeletedFinalStateUnknown, diffList, type ListDiff } from './informer/diff.js'
export {
  Indexer,
  LABEL_INDEX,
  NAMESPACE_INDEX,
  labelIndexFunc,
  labelValueIndexFunc,
  namespaceIndexFunc,
  type IndexFunc,
} from './informer/indexer.js'
export { WorkQueue } from './informer/workqueue.js'
export {
  ExponentialBackoffRateLimiter,
  MaxOfRateLimiter,
  TokenBucketRateLimiter,
  defaultRateLimiter,
  type RateLimiter,
} from './informer/rate-limiter.js'
export { runWorkers, type WorkerOptions, type Workers } from './informer/controller.js'
