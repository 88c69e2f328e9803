/**
 * etcd's lock and election recipe (client/v3/concurrency), run server-side for the v3lock and
 * v3election services: each contender for `name` owns the key `name/<lease id in hex>`, attached to its
 * lease; contenders are ordered by create revision; the one with the lowest holds the lock (or leads).
 * A contender waits until no key under the prefix has a lower create revision. Its key goes away when it
 * unlocks or resigns, when its lease expires or is revoked, or when it gives up waiting (the client went
 * away): then the next one in line goes.
 *
 * Waiting is driven by the log's commits: a waiter re-checks when a committed event touches its prefix.
 *
 * Every read and write is made through the caller's view of the log (auth/guarded-log.ts), as etcd's
 * recipes run with the caller's credentials: entering needs WRITE on the contender's key and READ on it,
 * waiting READ on the prefix, leaving WRITE on the key. The commits that wake waiters are only a signal.
 */
import type { Log } from '../../log/backend.js'
import { KvlogError } from '../../log/errors.js'
import { prefixEnd } from '../../log/keys.js'
import type { KeyValue } from '../../log/types.js'

export interface Entered {
  key: Buffer
  createRevision: number
  /** The revision of the write (or of the store, when the key existed). */
  revision: number
  /** The key existed already (the same lease contends again). */
  existed: boolean
  value: Buffer
}

export class Contenders {
  private readonly watchers = new Set<{ prefix: Buffer; wake: () => void }>()
  private readonly unsubscribe: () => void

  constructor(commits: Pick<Log, 'subscribe'>) {
    this.unsubscribe = commits.subscribe((entries) => {
      if (this.watchers.size === 0) return
      for (const w of [...this.watchers]) {
        if (entries.some((e) => e.events.some((ev) => startsWith(ev.kv.key, w.prefix)))) w.wake()
      }
    })
  }

  close(): void {
    this.unsubscribe()
  }

  /** `name/` and this lease's key under it. */
  static keyOf(name: Buffer, lease: bigint): { prefix: Buffer; key: Buffer } {
    const prefix = Buffer.concat([name, Buffer.from('/')])
    return { prefix, key: Buffer.concat([prefix, Buffer.from(lease.toString(16))]) }
  }

  /** Creates the contender's key with the value unless it exists (etcd: If(create == 0) Put Else Get). */
  async enter(log: Log, key: Buffer, lease: bigint, value: Buffer): Promise<Entered> {
    const r = await log.txn({
      compare: [{ key, target: 'CREATE', result: 'EQUAL', value: 0 }],
      success: [
        { type: 'put', key, value, lease },
        { type: 'range', key },
      ],
      failure: [{ type: 'range', key }],
    })
    const got = r.results[r.succeeded ? 1 : 0]
    const kv = got.type === 'range' ? got.kvs[0] : undefined
    if (kv === undefined) throw new KvlogError('INTERNAL', 'contender key vanished while entering')
    return { key, createRevision: kv.createRevision, revision: r.revision, existed: !r.succeeded, value: kv.value }
  }

  /**
   * Enters the line for `name` with `lease` and waits for its turn: resolves with the entry and the
   * revision at which it leads. A contender that gives up (the signal aborts, its lease is gone) leaves
   * the line (its key is deleted) so the next one goes. With `replaceValue`, a key that existed already
   * (the same lease contending again) takes `value`.
   */
  async contend(
    log: Log,
    name: Buffer,
    lease: bigint,
    value: Buffer,
    signal: AbortSignal,
    replaceValue = false,
  ): Promise<{ entered: Entered; revision: number }> {
    const { prefix, key } = Contenders.keyOf(name, lease)
    const entered = await this.enter(log, key, lease, value)
    if (replaceValue && entered.existed && !entered.value.equals(value)) await log.put(key, value, { lease })
    try {
      return { entered, revision: await this.waitTurn(log, prefix, key, entered.createRevision, signal) }
    } catch (err) {
      await log.delete(key).catch(() => undefined)
      throw err
    }
  }

  /** The first contender under the prefix (lowest create revision), if any. */
  async first(log: Log, prefix: Buffer): Promise<KeyValue | undefined> {
    const r = await log.range(prefix, { rangeEnd: prefixEnd(prefix), sortTarget: 'CREATE', sortOrder: 'ASCEND', limit: 1 })
    return r.kvs[0]
  }

  /**
   * Resolves with the store's revision once no key under `prefix` was created before `createRevision`
   * (the contender's turn). Fails with LEASE_NOT_FOUND if the contender's own key disappears meanwhile
   * (its lease expired or was revoked), and with CANCELLED when `signal` aborts.
   */
  waitTurn(log: Log, prefix: Buffer, key: Buffer, createRevision: number, signal: AbortSignal): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      let checking = false
      let again = false
      const watcher = { prefix, wake: () => void check() }
      const done = (err: Error | undefined, revision?: number) => {
        this.watchers.delete(watcher)
        signal.removeEventListener('abort', onAbort)
        if (err) reject(err)
        else resolve(revision!)
      }
      const onAbort = () => done(new Error('the client went away'))
      const check = async (): Promise<void> => {
        if (checking) {
          again = true
          return
        }
        checking = true
        try {
          do {
            again = false
            if (signal.aborted) return
            const [before, mine] = await Promise.all([
              // (count ignores the create-revision filter: look at the kvs)
              log.range(prefix, { rangeEnd: prefixEnd(prefix), maxCreateRevision: createRevision - 1, limit: 1, keysOnly: true }),
              log.range(key),
            ])
            if (mine.kvs.length === 0 || mine.kvs[0].createRevision !== createRevision) {
              return done(new KvlogError('LEASE_NOT_FOUND', "the contender's key is gone (its lease expired or was revoked)"))
            }
            if (before.kvs.length === 0) return done(undefined, before.revision)
          } while (again)
        } catch (err) {
          done(err as Error)
        } finally {
          checking = false
        }
      }
      if (signal.aborted) return onAbort()
      signal.addEventListener('abort', onAbort)
      this.watchers.add(watcher)
      void check()
    })
  }

  /** Calls `fn` after each commit that touches the prefix, until the returned function is called. */
  onChange(prefix: Buffer, fn: () => void): () => void {
    const watcher = { prefix, wake: fn }
    this.watchers.add(watcher)
    return () => this.watchers.delete(watcher)
  }
}

function startsWith(key: Buffer, prefix: Buffer): boolean {
  return key.length >= prefix.length && key.subarray(0, prefix.length).equals(prefix)
}
