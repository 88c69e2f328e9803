/**
 * A spread of watch specs for load tests (test/apiserver/watch/guarantees.test.ts, the reliability soak):
 * single keys (one not UTF-8), prefixes, ranges, every key; the filters, prevKv and progress notices.
 * The keys are those of the tests' key spaces: /a/, /b/, /c/ with k0..k8 and one non-UTF-8 key each.
 */
import type { WatchSelection } from '../apiserver/watch/checker.js'

export type WatchSpec = WatchSelection & { progressNotify?: boolean }

export const WATCH_SPECS: readonly WatchSpec[] = [
  { key: '/a/k3', prevKv: true },
  { key: '/b/k5' },
  { keyBase64: Buffer.from('/a/\xff\xfe', 'latin1').toString('base64'), prevKv: true },
  { key: '/a/', prefix: true, prevKv: true },
  { key: '/b/', prefix: true },
  { key: '/c/', prefix: true, prevKv: true, noDelete: true },
  { key: '/a/', prefix: true, noPut: true, prevKv: true },
  { key: '/a/k5', rangeEnd: '/b/k5', prevKv: true },
  { key: '/b/k2', rangeEnd: '/c/', noPut: true },
  { keyBase64: 'AA==', fromKey: true, prevKv: true },
  { keyBase64: 'AA==', fromKey: true, progressNotify: true },
  { key: '/b/', fromKey: true, prevKv: true, progressNotify: true },
  { key: '/c/', prefix: true, noPut: true, noDelete: true },
  { key: '/', prefix: true, prevKv: true },
]
