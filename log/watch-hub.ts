/**
 * The watch hub's public surface (DESIGN.md, "Watch"). The implementation is split by job under log/watch/:
 *
 *   hub.ts            WatchHub: commit dispatch to synced watchers, backpressure, progress, close
 *   catch-up.ts       bringing a watcher from a past revision to the head (ring, else log.history)
 *   watcher.ts        one watch: spec, state machine, the handle
 *   watcher-index.ts  synced watchers by exact key, prefix and range, grouped by identical bounds/options
 *   ring.ts           the most recent committed entries, in memory
 *   types.ts          WatchSpec, WatchSink, WatchHandle, options, stats
 */
export { WatchHub } from './watch/hub.js'
export type {
  WatchBatch,
  WatchFilters,
  WatchHandle,
  WatchHubOptions,
  WatchHubStats,
  WatchSink,
  WatchSpec,
} from './watch/types.js'
