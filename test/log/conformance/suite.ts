/**
 * The conformance suite every log backend must pass (docs/architecture.md: both engines, LevelDB and
 * JetStream, run the same tests). A backend's test calls logConformanceSuite with a factory that
 * opens a fresh, empty log on its own storage, opened with the limits given here (default: DEFAULT_LIMITS).
 *
 * Errors are asserted by `.code` only, never by message.
 */
import { closeTests } from './close.js'
import { compactionTests } from './compaction.js'
import { concurrencyTests } from './concurrency.js'
import { deleteTests } from './delete.js'
import type { ConformanceLimits, OpenLog } from './helpers.js'
import { historyTests } from './history.js'
import { leaseTests } from './leases.js'
import { metaTests } from './meta.js'
import { putTests } from './put.js'
import { rangeTests } from './range.js'
import { rangeIntoTests } from './range-into.js'
import { revisionTests } from './revisions.js'
import { statusTests } from './status.js'
import { subscribeTests } from './subscribe.js'
import { txnCompareTests } from './txn-compare.js'
import { txnOpTests } from './txn-ops.js'
import { validationTests } from './validation.js'

export type { ConformanceLimits, LogFixture, OpenLog } from './helpers.js'

/** The limits the suite assumes unless told otherwise: small, so the edges are cheap to reach. */
export const DEFAULT_LIMITS: ConformanceLimits = { maxTxnOps: 8, maxRequestBytes: 4096, segmentMaxEntries: 5, leaseMinTtl: 1 }

export function logConformanceSuite(name: string, open: OpenLog, limits: ConformanceLimits = DEFAULT_LIMITS): void {
  describe(`log conformance: ${name}`, function () {
    this.timeout(30_000)
    const ctx = { open, limits }
    revisionTests(ctx)
    putTests(ctx)
    deleteTests(ctx)
    rangeTests(ctx)
    rangeIntoTests(ctx)
    txnCompareTests(ctx)
    txnOpTests(ctx)
    historyTests(ctx)
    compactionTests(ctx)
    leaseTests(ctx)
    validationTests(ctx)
    concurrencyTests(ctx)
    subscribeTests(ctx)
    statusTests(ctx)
    metaTests(ctx)
    closeTests(ctx)
  })
}
