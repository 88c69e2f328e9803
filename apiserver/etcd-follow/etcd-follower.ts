/**
 * `kvlog serve --follow-etcd ENDPOINTS`: the store mirrors a running etcd revision for revision until the
 * cutover, so that clients can move from etcd to kvlog without a relist.
 *
 *   import     an empty data dir is first imported (import-etcd.ts: floor, base state, history, leases)
 *   follow     a watch with prevKv from the store's revision + 1; each etcd revision is applied as ONE
 *              entry through Replica.applyReplicated (the replication contract, log/replica.ts), which evaluates it against
 *              the mirrored state and gives it the next revision: that must be etcd's revision, or the
 *              mirror has diverged and stops (state 'failed'). A lease a put names that the mirror does not
 *              know yet is granted first, in the same batch, with the TTL etcd granted it.
 *   cutover    waits until the mirror holds the source's current revision, stops the watch, makes the
 *              leases the source's (leases it no longer has and that hold no keys are revoked, leases
 *              created meanwhile are granted, and every lease starts its granted TTL afresh, as a
 *              keep-alive would), starts expiring leases, and opens writes (server.ts's read-only gate).
 *
 * While following, the store expires no lease itself (etcd's expiries arrive as DELETE events) and the
 * entries carry the time kvlog applied them (etcd keeps no commit times). The progress is a durable meta
 * record written in each applied batch (FOLLOW_META): after a restart the mirror resumes from its own
 * revision, and a store that was cut over refuses to follow again. etcd's compactions are not mirrored:
 * the store keeps history from the import's floor under its own compaction policy.
 *
 * Lag: `lagRevisions` is the source's last known revision (from events and a Status poll every
 * followEtcdStatusInterval) minus the mirror's; `lagSeconds` is how long ago the oldest revision the
 * mirror knows of and has not applied yet became known (0 when caught up).
 */
import { KvlogError, type Replica, type ReplicatedWrite, type TxnResult } from '../../log/index.js'
import { EtcdSource, type SourceAccess, type SourceEvent } from './etcd-source.js'

/** The meta record of a store that follows (or followed) an etcd. */
export const FOLLOW_META = 'followEtcd'

export interface FollowMarker {
  state: 'following' | 'cutover'
  endpoints: string
  revision: number
}

export type FollowState = 'following' | 'cutting-over' | 'cutover' | 'failed'

export interface FollowStatus {
  state: FollowState
  endpoint: string
  /** The mirror's revision. */
  revision: number
  /** The source's last known revision. */
  sourceRevision: number
  lagRevisions: number
  lagSeconds: number
  /** Set once cut over: the revision at which kvlog took over the writes. */
  cutoverRevision?: number
  /** Why following stopped ('failed'), or the last error from the source while retrying. */
  error?: { code: string; message: string }
}

export interface FollowOptions {
  endpoints: string
  access: SourceAccess
  /** ms between Status polls of the source (followEtcdStatusInterval). */
  statusInterval: number
  /** At most this many revisions per applied batch (maxBatchTxns). */
  maxBatchTxns: number
  /** The store's lease check interval once it owns its leases (leaseCheckInterval). */
  leaseCheckInterval: number
  /** Operator-facing log lines. */
  log: (line: string) => void
}

export class EtcdFollower {
  private state: FollowState = 'following'
  private sourceRevision: number
  /** Source revisions as they became known, oldest first, each above the mirror's revision. */
  private readonly known: Array<{ revision: number; at: number }> = []
  private readonly abort = new AbortController()
  private readonly timer: NodeJS.Timeout
  private readonly loop: Promise<void>
  private error: { code: string; message: string } | undefined
  private cutoverRevision: number | undefined
  private cutoverDone: Promise<FollowStatus> | undefined
  /** Resolves waiters of a revision (cutover). */
  private readonly waiters = new Set<() => void>()

  private constructor(
    private readonly store: Replica,
    private readonly source: EtcdSource,
    private readonly o: FollowOptions,
  ) {
    this.sourceRevision = store.revision
    this.timer = setInterval(() => void this.poll(), o.statusInterval)
    this.timer.unref()
    this.loop = this.follow()
  }

  /**
   * Checks that `store` may follow (never cut over, and imported from etcd: it carries the marker) and
   * starts following from its revision.
   */
  static async start(store: Replica, o: FollowOptions): Promise<EtcdFollower> {
    const marker = (await store.readMeta(FOLLOW_META)) as FollowMarker | undefined
    if (marker === undefined)
      throw new KvlogError(
        'INVALID_ARGUMENT',
        'followEtcd: the data dir holds a store that was not imported from etcd; follow into an empty one',
        {
          field: 'followEtcd',
        },
      )
    if (marker.state === 'cutover')
      throw new KvlogError(
        'INVALID_ARGUMENT',
        `followEtcd: this store was cut over from etcd at revision ${marker.revision} and takes its own writes since; unset followEtcd`,
        { field: 'followEtcd' },
      )
    const source = await EtcdSource.connect(o.endpoints, o.access)
    try {
      const head = await source.revision()
      if (head < store.revision)
        throw new KvlogError(
          'INVALID_ARGUMENT',
          `followEtcd: the store is at revision ${store.revision}, ahead of etcd at ${source.endpoint} (revision ${head}): not the etcd it was imported from`,
          { field: 'followEtcd' },
        )
    } catch (err) {
      source.close()
      throw err
    }
    return new EtcdFollower(store, source, o)
  }

  /** Marks a freshly imported store as following (before start). */
  static async mark(store: Replica, endpoints: string): Promise<void> {
    const marker: FollowMarker = { state: 'following', endpoints, revision: store.revision }
    await store.writeMeta(FOLLOW_META, marker)
  }

  get writable(): boolean {
    return this.state === 'cutover'
  }

  status(): FollowStatus {
    const revision = this.store.revision
    const oldest = this.known.find((k) => k.revision > revision)
    return {
      state: this.state,
      endpoint: this.source.endpoint,
      revision,
      sourceRevision: this.sourceRevision,
      lagRevisions: Math.max(0, this.sourceRevision - revision),
      lagSeconds: oldest === undefined ? 0 : (Date.now() - oldest.at) / 1000,
      ...(this.cutoverRevision !== undefined ? { cutoverRevision: this.cutoverRevision } : {}),
      ...(this.error !== undefined ? { error: this.error } : {}),
    }
  }

  /**
   * Waits (up to `timeoutMs`) until the mirror holds the source's current revision, then stops following
   * and hands the writes to kvlog. Writers on etcd must have stopped: what etcd takes after this point is
   * not mirrored (the answer's sourceRevision shows it). Calling it again returns the same outcome.
   */
  cutover(timeoutMs: number): Promise<FollowStatus> {
    if (this.state === 'failed') return Promise.reject(this.failure())
    this.cutoverDone ??= this.runCutover(timeoutMs).catch((err: unknown) => {
      this.cutoverDone = undefined
      if (this.state === 'cutting-over') this.state = 'following'
      throw err
    })
    return this.cutoverDone
  }

  /** Stops following (the server is closing); the store stays as it is. */
  async close(): Promise<void> {
    clearInterval(this.timer)
    this.abort.abort()
    await this.loop
    this.source.close()
  }

  private async runCutover(timeoutMs: number): Promise<FollowStatus> {
    this.state = 'cutting-over'
    const target = await this.source.revision()
    this.noteSource(target)
    await this.waitFor(target, timeoutMs)
    this.abort.abort()
    await this.loop
    if (this.state !== 'cutting-over') throw this.failure()
    const revision = this.store.revision
    try {
      await this.store.applyReplicated(Date.now(), await this.leaseHandover(), {
        name: FOLLOW_META,
        value: { state: 'cutover', endpoints: this.o.endpoints, revision } satisfies FollowMarker,
      })
    } catch (err) {
      // Following has stopped and the writes are not open: nothing to go back to but a restart.
      this.fail(err instanceof KvlogError ? err : new KvlogError('UNAVAILABLE', describe(err).message))
      throw this.failure()
    }
    this.store.expireLeases(this.o.leaseCheckInterval)
    clearInterval(this.timer)
    this.sourceRevision = await this.source.revision().catch(() => this.sourceRevision)
    this.source.close()
    this.cutoverRevision = revision
    this.known.length = 0
    this.state = 'cutover'
    this.o.log(`kvlog: cut over from etcd at revision ${revision}; writes are open`)
    return this.status()
  }

  /** The lease writes that make the store's leases the source's, each with its full granted TTL. */
  private async leaseHandover(): Promise<ReplicatedWrite[]> {
    const theirs = new Map((await this.source.leases()).map((l) => [l.id, l]))
    const writes: ReplicatedWrite[] = []
    for (const id of this.store.leases()) {
      if (theirs.has(id)) continue
      // Gone on etcd: its keys' deletes came through the watch. One that still holds keys expires here.
      if ((this.store.leaseTimeToLive(id, { keys: true })?.keys ?? []).length === 0) writes.push({ type: 'leaseRevoke', id })
    }
    for (const l of theirs.values()) {
      if (this.store.leaseTimeToLive(l.id) === undefined) writes.push({ type: 'leaseGrant', id: l.id, ttl: l.grantedTtl })
      else writes.push({ type: 'leaseKeepAlive', id: l.id })
    }
    return writes
  }

  private waitFor(revision: number, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.store.revision >= revision) return done(resolve)
        if (this.state === 'failed') return done(() => reject(this.failure()))
      }
      const timeout = setTimeout(
        () =>
          done(() =>
            reject(
              new KvlogError(
                'UNAVAILABLE',
                `cutover: the mirror is at revision ${this.store.revision}, etcd at ${revision}, after ${timeoutMs} ms; still following`,
              ),
            ),
          ),
        timeoutMs,
      )
      const done = (settle: () => void) => {
        clearTimeout(timeout)
        this.waiters.delete(check)
        settle()
      }
      this.waiters.add(check)
      check()
    })
  }

  /**
   * Reads the watch into a queue while the previous group is being written, and applies whatever has
   * queued (up to maxBatchTxns revisions) as one batch: a mirror that falls behind catches up with one
   * fsync per group, not per revision.
   */
  private async follow(): Promise<void> {
    while (!this.abort.signal.aborted) {
      const queued: Array<{ revision: number; events: SourceEvent[] }> = []
      let wake: (() => void) | undefined
      let ended = false
      let readError: unknown
      const reader = (async () => {
        try {
          for await (const r of this.source.history(this.store.revision + 1, this.abort.signal)) {
            this.noteSource(r.revision)
            queued.push(r)
            wake?.()
          }
        } catch (err) {
          readError = err
        } finally {
          ended = true
          wake?.()
        }
      })()
      try {
        while (!this.abort.signal.aborted) {
          if (queued.length === 0) {
            if (ended) break
            await new Promise<void>((resolve) => (wake = resolve))
            wake = undefined
            continue
          }
          await this.apply(queued.splice(0, this.o.maxBatchTxns))
          this.error = undefined
          for (const check of [...this.waiters]) check()
        }
      } catch (err) {
        // The mirror itself failed (diverged, or the store refused): following cannot go on.
        this.fail(err instanceof KvlogError ? err : diverged(this.store.revision + 1, describe(err).message))
        this.abort.abort()
        await reader
        return
      }
      await reader
      if (this.abort.signal.aborted) return
      if (readError instanceof KvlogError && readError.code === 'COMPACTED') {
        this.fail(readError)
        return
      }
      // The source restarted or is unreachable: retry from the mirror's revision.
      this.error = describe(readError ?? new KvlogError('UNAVAILABLE', 'the etcd watch ended'))
      this.o.log(`kvlog: following etcd: ${this.error.message}; retrying`)
      await sleep(this.o.statusInterval, this.abort.signal)
    }
  }

  /** Applies consecutive etcd revisions as one batch; each must get its etcd revision here. */
  private async apply(revisions: ReadonlyArray<{ revision: number; events: readonly SourceEvent[] }>): Promise<void> {
    const writes: ReplicatedWrite[] = []
    const txnAt: number[] = []
    const granted = new Set<bigint>()
    for (const { events } of revisions) {
      for (const e of events) {
        const lease = e.type === 'PUT' ? e.kv.lease : 0n
        if (lease === 0n || granted.has(lease) || this.store.leaseTimeToLive(lease) !== undefined) continue
        granted.add(lease)
        // Revoked since (its keys' deletes follow in the stream): any TTL will do, the store expires nothing.
        const theirs = await this.source.lease(lease)
        writes.push({ type: 'leaseGrant', id: lease, ttl: theirs?.grantedTtl ?? 1 })
      }
      txnAt.push(writes.length)
      writes.push({
        type: 'txn',
        unlimited: true,
        request: {
          success: events.map((e) =>
            e.type === 'PUT' ? { type: 'put', key: e.kv.key, value: e.kv.value, lease: e.kv.lease } : { type: 'delete', key: e.kv.key },
          ),
        },
      })
    }
    const last = revisions[revisions.length - 1].revision
    const results = await this.store.applyReplicated(Date.now(), writes, {
      name: FOLLOW_META,
      value: { state: 'following', endpoints: this.o.endpoints, revision: last } satisfies FollowMarker,
    })
    for (const [i, r] of results.entries()) {
      if (r.status === 'rejected') throw diverged(revisions[0].revision, `applying it failed: ${describe(r.reason).message}`)
      const n = txnAt.indexOf(i)
      if (n < 0) continue
      const got = (r.value as TxnResult).revision
      if (got !== revisions[n].revision) throw diverged(revisions[n].revision, `it became revision ${got} here`)
    }
  }

  private noteSource(revision: number): void {
    if (revision <= this.sourceRevision) return
    this.sourceRevision = revision
    const applied = this.store.revision
    while (this.known.length > 0 && this.known[0].revision <= applied) this.known.shift()
    this.known.push({ revision, at: Date.now() })
  }

  private async poll(): Promise<void> {
    try {
      this.noteSource(await this.source.revision())
    } catch (err) {
      this.error = describe(err)
    }
  }

  private fail(err: KvlogError): void {
    this.state = 'failed'
    this.error = describe(err)
    clearInterval(this.timer)
    this.o.log(`kvlog: stopped following etcd: ${err.message}`)
    for (const check of [...this.waiters]) check()
  }

  private failure(): KvlogError {
    return new KvlogError('UNAVAILABLE', `following etcd stopped: ${this.error?.message ?? 'unknown'}; import again into an empty data dir`)
  }
}

function diverged(revision: number, why: string): KvlogError {
  return new KvlogError('INTERNAL', `the mirror diverged from etcd at revision ${revision}: ${why}`, { diverged: true })
}

function describe(err: unknown): { code: string; message: string } {
  if (err instanceof KvlogError) return { code: err.code, message: err.message }
  return { code: 'UNAVAILABLE', message: err instanceof Error ? err.message : String(err) }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms)
    function done() {
      clearTimeout(t)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}
