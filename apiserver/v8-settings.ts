/**
 * V8 settings for the process that runs the store (`kvlog serve`, and the benchmarks that run a LevelLog
 * in-process, so that they measure what the server does).
 *
 * Allocation-site pretenuring (v8AllocationSitePretenuring, default off): V8 counts, per allocation site,
 * how many of its objects survive a scavenge, and once most do, allocates that site's objects in the old
 * generation directly. A burst of writes (thousands in flight, each write's objects alive until its group
 * is durable) makes the writer's sites look long-lived; at a steady rate afterwards those objects die within
 * a millisecond or two but are still allocated old. After a large burst followed by a steady rate, the
 * process with it ran full mark-compacts and spent more than twice as long in scavenges; without it, none.
 */
import v8 from 'node:v8'
import type { Config } from '../config/index.js'

export function applyV8Settings(config: Pick<Config, 'v8AllocationSitePretenuring'>): void {
  // Takes effect for allocation decisions from now on; applied before the store is opened.
  v8.setFlagsFromString(config.v8AllocationSitePretenuring ? '--allocation-site-pretenuring' : '--no-allocation-site-pretenuring')
}
