/**
 * The Log as the native and resource doors see it: the same contract, with every call checked by the
 * authorizer against the identity of the request being served. A door runs each request inside
 * `asCaller(identity, ...)` (an AsyncLocalStorage scope, so the identity follows the request through its
 * awaits); a call outside any request scope is anonymous (denied once auth is enabled).
 *
 * What each call needs: get, range, history: READ on the keys; put: WRITE (plus READ with prevKv, and
 * WRITE on the keys already attached to its lease); delete: WRITE on the range (plus READ with prevKv);
 * txn: authorizer.checkTxn; leaseRevoke: WRITE on the attached keys; leaseTimeToLive with keys: READ on
 * them; compact, snapshot, reclaimSpace, setAlarm and writeMeta: role root. Status, alarms, lease grant,
 * keep-alive and list need nothing (as etcd).
 *
 * Writes are recorded with their author: the scope's door and the caller's user (who changed what).
 *
 * The etcd door has no request scope that follows a call through grpc-js: its services get CallerLogs,
 * which hands out the same checked view for an identity given explicitly (`logs.as(who, 'etcd')`) and
 * keeps the unchecked log private, so no service on any port can reach it.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { CorruptReport, DeleteOptions, Log, PutOptions } from '../../log/backend.js'
import { KvlogError } from '../../log/errors.js'
import type { Author, BytesLike, HistoryOptions, KvSink, RangeOptions, TxnRequest } from '../../log/types.js'
import { ANONYMOUS, type Authorizer, type Identity } from './authorizer.js'

interface Scope {
  who: Identity
  door: string
  agent?: string
}

const scope = new AsyncLocalStorage<Scope>()

/**
 * Runs `fn` (and everything it starts) as `identity`, coming through `door` ('http', 'resources'), from a
 * client that calls itself `agent` (recorded on writes made without a user).
 */
export function asCaller<T>(identity: Identity, fn: () => T, door = 'http', agent?: string): T {
  return scope.run({ who: identity, door, agent }, fn)
}

/** The identity of the request being served here. */
export function currentCaller(): Identity {
  return scope.getStore()?.who ?? ANONYMOUS
}

/** Who a write made here is recorded as: the user, else (anonymous) the client's agent when known. */
export function authorOf(who: Identity, door: string, agent?: string): Author {
  if (who.user !== undefined) return { door, user: who.user }
  return agent ? { door, agent } : { door }
}

function currentAuthor(): Author {
  const s = scope.getStore()
  return s === undefined ? { door: 'http' } : authorOf(s.who, s.door, s.agent)
}

/** The log as the request scope's caller (asCaller): for the native and resource doors. */
export function guardLog(log: Log, auth: Authorizer): Log {
  return new CheckedLog(log, auth, currentCaller, currentAuthor)
}

/**
 * The checked log for callers named explicitly: what the etcd door's services are given. Besides `as`, it
 * offers only what needs no permission.
 */
export class CallerLogs {
  readonly #log: Log

  constructor(
    log: Log,
    readonly auth: Authorizer,
  ) {
    this.#log = log
  }

  /** The log as `who`, its writes recorded as coming through `door` (and, made without a user, from `agent`). */
  as(who: Identity, door: string, agent?: string): Log {
    const author = authorOf(who, door, agent)
    return new CheckedLog(
      this.#log,
      this.auth,
      () => who,
      () => author,
    )
  }

  get revision(): number {
    return this.#log.revision
  }

  /** One read of the store for the health probes (/livez, /readyz); nothing read reaches the caller. */
  async probe(): Promise<void> {
    await this.#log.get('health')
  }

  /** The active alarms (no permission needed, as etcd's health check). */
  alarms(): ReturnType<Log['alarms']> {
    return this.#log.alarms()
  }

  /** Commits as they happen, for waking waiters; what a waiter then reads goes through `as`. */
  subscribe(listener: Parameters<Log['subscribe']>[0]): () => void {
    return this.#log.subscribe(listener)
  }

  /** Meta records as this copy applies them (the server's own caches, e.g. etcd's alarm entries). */
  onMeta(listener: (name: string, value: unknown) => void): void {
    this.#log.onMeta?.(listener)
  }

  /** Cluster mode: the leader's corruption check found a member's copy different from the majority's. */
  onCorrupt(listener: (report: CorruptReport) => void): void {
    this.#log.onCorrupt?.(listener)
  }

  /** The log for the records the server keeps on its own account (an alarm it raises itself), no caller's. */
  get own(): Pick<Log, 'readMeta' | 'writeMeta' | 'setAlarm' | 'alarms'> {
    return this.#log
  }
}

class CheckedLog implements Log {
  readonly #log: Log

  constructor(
    log: Log,
    private readonly auth: Authorizer,
    private readonly who: () => Identity,
    private readonly author: () => Author,
  ) {
    this.#log = log
  }

  get revision(): number {
    return this.#log.revision
  }

  get compactRevision(): number {
    return this.#log.compactRevision
  }

  private leaseKeys = (id: bigint): Buffer[] => this.#log.leaseTimeToLive(id, { keys: true })?.keys ?? []

  txn(request: TxnRequest): ReturnType<Log['txn']> {
    this.auth.checkTxn(this.who(), request, this.leaseKeys)
    return this.#log.txn({ ...request, author: this.author() })
  }

  put(key: BytesLike, value: BytesLike, options?: PutOptions): ReturnType<Log['put']> {
    if (this.auth.enabled) {
      const id = this.who()
      this.auth.checkRange(id, key, undefined, 'write')
      if (options?.prevKv === true) this.auth.checkRange(id, key, undefined, 'read')
      this.auth.checkLease(id, options?.lease, this.leaseKeys)
    }
    return this.#log.put(key, value, { ...options, author: this.author() })
  }

  delete(key: BytesLike, options?: DeleteOptions): ReturnType<Log['delete']> {
    if (this.auth.enabled) {
      const id = this.who()
      this.auth.checkRange(id, key, options?.rangeEnd, 'write')
      if (options?.prevKv === true) this.auth.checkRange(id, key, options.rangeEnd, 'read')
    }
    return this.#log.delete(key, { ...options, author: this.author() })
  }

  get(key: BytesLike, options?: { revision?: number }): ReturnType<Log['get']> {
    if (this.auth.enabled) this.auth.checkRange(this.who(), key, undefined, 'read')
    return this.#log.get(key, options)
  }

  range(key: BytesLike, options?: RangeOptions): ReturnType<Log['range']> {
    if (this.auth.enabled) this.auth.checkRange(this.who(), key, options?.rangeEnd, 'read')
    return this.#log.range(key, options)
  }

  rangeInto(key: BytesLike, options: RangeOptions | undefined, sink: KvSink): ReturnType<Log['rangeInto']> {
    if (this.auth.enabled) this.auth.checkRange(this.who(), key, options?.rangeEnd, 'read')
    return this.#log.rangeInto(key, options, sink)
  }

  history(key: BytesLike, options?: HistoryOptions): ReturnType<Log['history']> {
    if (this.auth.enabled) this.auth.checkRange(this.who(), key, options?.rangeEnd, 'read')
    return this.#log.history(key, options)
  }

  compact(...args: Parameters<Log['compact']>): ReturnType<Log['compact']> {
    this.auth.checkAdmin(this.who())
    return this.#log.compact(...args)
  }

  status(): ReturnType<Log['status']> {
    return this.#log.status()
  }

  revisionAt(timestamp: number): ReturnType<Log['revisionAt']> {
    return this.#log.revisionAt(timestamp)
  }

  snapshot(...args: Parameters<Log['snapshot']>): ReturnType<Log['snapshot']> {
    this.auth.checkAdmin(this.who())
    return this.#log.snapshot(...args)
  }

  reclaimSpace(): ReturnType<Log['reclaimSpace']> {
    this.auth.checkAdmin(this.who())
    return this.#log.reclaimSpace()
  }

  readMeta(name: string): ReturnType<Log['readMeta']> {
    return this.#log.readMeta(name)
  }

  writeMeta(...args: Parameters<Log['writeMeta']>): ReturnType<Log['writeMeta']> {
    this.auth.checkAdmin(this.who())
    return this.#log.writeMeta(...args)
  }

  alarms(): ReturnType<Log['alarms']> {
    return this.#log.alarms()
  }

  setAlarm(...args: Parameters<Log['setAlarm']>): ReturnType<Log['setAlarm']> {
    this.auth.checkAdmin(this.who())
    return this.#log.setAlarm(...args)
  }

  leaseGrant(...args: Parameters<Log['leaseGrant']>): ReturnType<Log['leaseGrant']> {
    return this.#log.leaseGrant(...args)
  }

  leaseRevoke(id: bigint): ReturnType<Log['leaseRevoke']> {
    if (this.auth.enabled) for (const k of this.leaseKeys(id)) this.auth.checkRange(this.who(), k, undefined, 'write')
    return this.#log.leaseRevoke(id)
  }

  leaseKeepAlive(id: bigint): ReturnType<Log['leaseKeepAlive']> {
    return this.#log.leaseKeepAlive(id)
  }

  leaseTimeToLive(...args: Parameters<Log['leaseTimeToLive']>): ReturnType<Log['leaseTimeToLive']> {
    const t = this.#log.leaseTimeToLive(...args)
    if (this.auth.enabled && args[1]?.keys === true) for (const k of t?.keys ?? []) this.auth.checkRange(this.who(), k, undefined, 'read')
    return t
  }

  leases(): ReturnType<Log['leases']> {
    return this.#log.leases()
  }

  subscribe(listener: Parameters<Log['subscribe']>[0]): () => void {
    return this.#log.subscribe(listener)
  }

  /** A door never closes the store: the server does, once every door is closed. */
  close(): ReturnType<Log['close']> {
    return Promise.reject(new KvlogError('PERMISSION_DENIED', 'a door cannot close the store'))
  }
}
