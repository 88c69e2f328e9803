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
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { DeleteOptions, Log, PutOptions } from '../../log/backend.js'
import type { Author, BytesLike, HistoryOptions, RangeOptions, TxnRequest } from '../../log/types.js'
import { ANONYMOUS, type Authorizer, type Identity } from './authorizer.js'

interface Scope {
  who: Identity
  door: string
}

const scope = new AsyncLocalStorage<Scope>()

/** Runs `fn` (and everything it starts) as `identity`, coming through `door` ('http', 'resources'). */
export function asCaller<T>(identity: Identity, fn: () => T, door = 'http'): T {
  return scope.run({ who: identity, door }, fn)
}

/** The identity of the request being served here. */
export function currentCaller(): Identity {
  return scope.getStore()?.who ?? ANONYMOUS
}

/** Who a write made here is recorded as. */
export function authorOf(who: Identity, door: string): Author {
  return who.user === undefined ? { door } : { door, user: who.user }
}

function currentAuthor(): Author {
  const s = scope.getStore()
  return s === undefined ? { door: 'http' } : authorOf(s.who, s.door)
}

export function guardLog(log: Log, auth: Authorizer): Log {
  const who = currentCaller
  const leaseKeys = (id: bigint): Buffer[] => log.leaseTimeToLive(id, { keys: true })?.keys ?? []
  const guarded: Log = {
    get revision() {
      return log.revision
    },
    get compactRevision() {
      return log.compactRevision
    },
    txn(request: TxnRequest) {
      auth.checkTxn(who(), request)
      return log.txn({ ...request, author: currentAuthor() })
    },
    put(key: BytesLike, value: BytesLike, options?: PutOptions) {
      if (auth.enabled) {
        const id = who()
        auth.checkRange(id, key, undefined, 'write')
        if (options?.prevKv === true) auth.checkRange(id, key, undefined, 'read')
        const lease = options?.lease === undefined ? 0n : BigInt(options.lease)
        if (lease !== 0n) for (const k of leaseKeys(lease)) auth.checkRange(id, k, undefined, 'write')
      }
      return log.put(key, value, { ...options, author: currentAuthor() })
    },
    delete(key: BytesLike, options?: DeleteOptions) {
      if (auth.enabled) {
        auth.checkRange(who(), key, options?.rangeEnd, 'write')
        if (options?.prevKv === true) auth.checkRange(who(), key, options.rangeEnd, 'read')
      }
      return log.delete(key, { ...options, author: currentAuthor() })
    },
    get(key: BytesLike, options?: { revision?: number }) {
      if (auth.enabled) auth.checkRange(who(), key, undefined, 'read')
      return log.get(key, options)
    },
    range(key: BytesLike, options?: RangeOptions) {
      if (auth.enabled) auth.checkRange(who(), key, options?.rangeEnd, 'read')
      return log.range(key, options)
    },
    history(key: BytesLike, options?: HistoryOptions) {
      if (auth.enabled) auth.checkRange(who(), key, options?.rangeEnd, 'read')
      return log.history(key, options)
    },
    compact(revision, options) {
      auth.checkAdmin(who())
      return log.compact(revision, options)
    },
    status: () => log.status(),
    revisionAt: (timestamp) => log.revisionAt(timestamp),
    snapshot(chunkBytes) {
      auth.checkAdmin(who())
      return log.snapshot(chunkBytes)
    },
    reclaimSpace() {
      auth.checkAdmin(who())
      return log.reclaimSpace()
    },
    readMeta: (name) => log.readMeta(name),
    writeMeta(name, value, condition) {
      auth.checkAdmin(who())
      return log.writeMeta(name, value, condition)
    },
    alarms: () => log.alarms(),
    setAlarm(kind, active, options) {
      auth.checkAdmin(who())
      return log.setAlarm(kind, active, options)
    },
    leaseGrant: (ttl, id) => log.leaseGrant(ttl, id),
    leaseRevoke(id) {
      if (auth.enabled) for (const k of leaseKeys(id)) auth.checkRange(who(), k, undefined, 'write')
      return log.leaseRevoke(id)
    },
    leaseKeepAlive: (id) => log.leaseKeepAlive(id),
    leaseTimeToLive(id, options) {
      const t = log.leaseTimeToLive(id, options)
      if (auth.enabled && options?.keys === true) for (const k of t?.keys ?? []) auth.checkRange(who(), k, undefined, 'read')
      return t
    },
    leases: () => log.leases(),
    subscribe: (listener) => log.subscribe(listener),
    close: () => log.close(),
  }
  return guarded
}
