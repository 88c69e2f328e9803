/**
 * The soak with auth enabled (`--auth`): the server gets a static token for user root (tokenAuthFile),
 * a 1 s token TTL and a cheap password hash; once it is up, root, two roles and two users are created
 * and auth is enabled. Auth state is in the log, so it outlives every restart; issued tokens do not
 * (a restart ends them, as does a second without use), so the users' clients log in again and again.
 *
 *   writer   READWRITE on [/a/, /d/): every key of the workload
 *   reader   READ on [/a/, /c/): reads of /a/ and /b/ only; every write and every read of /c/ is denied
 *   root     the static token: the other clients, the watches, compaction, the oracle, the faults
 *
 * The users' clients run on the native door (user and password, Bearer tokens, login again after a 401)
 * and the etcd gRPC door (Auth.Authenticate, `token` metadata, login again after UNAUTHENTICATED), and
 * now and then stay idle past the TTL. checkPermissions then says, per operation, whether the user's
 * permissions allow it (as the server must decide: every key of a txn's compares and of both its
 * branches), and finds a violation when an operation the permissions deny was answered ok or was applied
 * (its value is in the oracle), or an allowed one was answered PERMISSION_DENIED.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { KvlogClient } from '../../../clients/index.js'
import { prefixEnd, type OracleEvent } from '../../apiserver/watch/checker.js'
import { sleep } from '../../support/watch-client.js'
import { GrpcDriver } from '../drivers/grpc.js'
import { NativeDriver } from '../drivers/native.js'
import type { Driver } from '../drivers/types.js'
import type { KeySelection, Operation, OpRecord, RecoveryCheck, TxnOp } from '../history.js'

export type SoakUser = 'writer' | 'reader'

/** An interval of keys [start, end); end 'open': every key from start on. */
interface Interval {
  start: Buffer
  end: Buffer | 'open'
}

const PERMISSIONS: Record<SoakUser, { read: Interval; write?: Interval }> = {
  writer: { read: { start: Buffer.from('/a/'), end: Buffer.from('/d/') }, write: { start: Buffer.from('/a/'), end: Buffer.from('/d/') } },
  reader: { read: { start: Buffer.from('/a/'), end: Buffer.from('/c/') } },
}

/** Token TTL on the server: short, so tokens end during the run; idle clients wait longer than this. */
export const TOKEN_TTL_MS = 1000

export interface AuthReport {
  /** Which client ran as which user (the others as root). */
  users: Record<string, SoakUser>
  /** Operations of the users' clients that their permissions deny, and how they were answered. */
  denied: number
  deniedAnswers: Record<string, number>
  /** PERMISSION_DENIED answers after the first restart (the auth state came back with the data). */
  deniedAfterFirstRestart: number
  /** Operations of the users' clients answered ok after the first restart (they logged in again). */
  okAfterFirstRestart: number
  /** Logins of the users' clients per door (the first, then one after every token that ended). */
  logins: Record<string, number>
  /** Answers UNAUTHENTICATED that reached the workload (a refreshed token should leave none). */
  unauthenticated: number
  violations: string[]
}

export class SoakAuth {
  private readonly drivers: Array<NativeDriver | GrpcDriver> = []
  private nativeLogins = 0

  private constructor(
    private readonly dir: string,
    readonly rootToken: string,
    readonly passwords: Record<SoakUser, string>,
  ) {}

  /** Writes the static token file; serverArgs() then points the server at it. */
  static async prepare(seed: number): Promise<SoakAuth> {
    const dir = await mkdtemp(join(tmpdir(), 'kvlog-soak-auth-'))
    const auth = new SoakAuth(dir, `soak-root-${seed}`, { writer: `w-${seed}`, reader: `r-${seed}` })
    await writeFile(join(dir, 'tokens.csv'), `${auth.rootToken},root,0\n`, { mode: 0o600 })
    return auth
  }

  serverArgs(): string[] {
    return ['--token-auth-file', join(this.dir, 'tokens.csv'), '--auth-token-ttl', `${TOKEN_TTL_MS}ms`, '--auth-password-hash-cost', '10']
  }

  /** Creates root, the roles and the users, then enables auth (on a server where it is still off). */
  async enable(endpoint: string): Promise<void> {
    const { auth } = new KvlogClient({ endpoint, timeoutMs: 30_000 })
    await auth.addUser('root', `root-${this.rootToken}`)
    await auth.grantRole('root', 'root')
    for (const user of ['writer', 'reader'] as SoakUser[]) {
      const p = PERMISSIONS[user]
      await auth.addRole(`soak-${user}`)
      if (p.write !== undefined) await auth.grantPermission(`soak-${user}`, 'READWRITE', p.write.start, { rangeEnd: p.write.end as Buffer })
      else await auth.grantPermission(`soak-${user}`, 'READ', p.read.start, { rangeEnd: p.read.end as Buffer })
      await auth.addUser(user, this.passwords[user])
      await auth.grantRole(user, `soak-${user}`)
    }
    await auth.enable()
  }

  /**
   * Waits until every member at `endpoints` answers auth enabled (a member that has not applied the
   * enable yet serves requests as with auth off), at most `timeoutMs`; answers the indexes of the members
   * still without auth then. The run goes on: their users' denied operations become violations.
   */
  async waitEnabled(endpoints: string[], timeoutMs = 15_000): Promise<number[]> {
    const deadline = performance.now() + timeoutMs
    const apis = endpoints.map((endpoint) => new KvlogClient({ endpoint, timeoutMs: 5000, credentials: { token: this.rootToken } }).auth)
    const disabled = async () => {
      const enabled = await Promise.all(
        apis.map((a) =>
          a.status().then(
            (s) => s.enabled,
            () => false,
          ),
        ),
      )
      return enabled.flatMap((e, i) => (e ? [] : [i]))
    }
    let left = await disabled()
    while (left.length > 0 && performance.now() < deadline) {
      await sleep(200)
      left = await disabled()
    }
    return left
  }

  /**
   * Client n's user: clients 0 and 1 are writers, 3 and 4 readers, the others root. In the single-node
   * soak clients take the doors in turn (native, grpc, resources), in the cluster soak native and grpc in
   * turn: either way each user has a client on the native and on the etcd door.
   */
  static userOf(n: number): SoakUser | undefined {
    return n >= 6 ? undefined : (['writer', 'writer', undefined, 'reader', 'reader', undefined] as const)[n]
  }

  /** A driver for `user` on the native (an http:// URL) or gRPC (host:port) door. */
  driver(door: 'native' | 'grpc', endpoint: string, user: SoakUser): Driver {
    const credentials = { user, password: this.passwords[user] }
    const d = door === 'native' ? new NativeDriver(endpoint, 5000, credentials) : new GrpcDriver(endpoint, 5000, credentials)
    if (door === 'native') {
      // The client library reads the password once per login (clients/auth.ts): count the reads from here on.
      const password = credentials.password
      Object.defineProperty(credentials, 'password', { get: () => (this.nativeLogins++, password) })
    }
    this.drivers.push(d)
    return d
  }

  get logins(): Record<string, number> {
    return { native: this.nativeLogins, grpc: this.drivers.reduce((n, d) => n + (d instanceof GrpcDriver ? d.logins : 0), 0) }
  }

  async close(): Promise<void> {
    await Promise.all(this.drivers.map((d) => d.close()))
    await rm(this.dir, { recursive: true, force: true })
  }
}

const buf = (b64: string) => Buffer.from(b64, 'base64')

function intervalOf(sel: KeySelection): Interval {
  const start = buf(sel.keyBase64)
  if (sel.prefix) return { start, end: prefixEnd(start) }
  if (sel.fromKey) return { start, end: 'open' }
  if (sel.rangeEndBase64 !== undefined) return { start, end: buf(sel.rangeEndBase64) }
  return { start, end: Buffer.concat([start, Buffer.from([0])]) }
}

function covers(perm: Interval | undefined, q: Interval): boolean {
  if (perm === undefined || Buffer.compare(perm.start, q.start) > 0) return false
  if (perm.end === 'open') return true
  return q.end !== 'open' && Buffer.compare(q.end, perm.end) <= 0
}

/** What `op` needs: read and write intervals (leases need none here: a user's leases carry only its own keys). */
function needs(op: Operation): { read: Interval[]; write: Interval[] } {
  const read: Interval[] = []
  const write: Interval[] = []
  const add = (o: TxnOp | Operation) => {
    if (o.type === 'put') write.push(intervalOf({ keyBase64: o.keyBase64 }))
    else if (o.type === 'delete') write.push(intervalOf(o.sel))
    else if (o.type === 'range') read.push(intervalOf(o.sel))
  }
  if (op.type === 'txn') {
    for (const c of op.compare) read.push(intervalOf({ keyBase64: c.keyBase64 }))
    for (const o of [...op.success, ...op.failure]) add(o)
  } else add(op)
  return { read, write }
}

export function allowed(user: SoakUser, op: Operation): boolean {
  const p = PERMISSIONS[user]
  const n = needs(op)
  return n.read.every((q) => covers(p.read, q)) && n.write.every((q) => covers(p.write, q))
}

/** The values an operation would write (each unique in the run). */
function valuesOf(op: Operation): string[] {
  if (op.type === 'put') return [op.valueBase64]
  if (op.type !== 'txn') return []
  return [...op.success, ...op.failure].flatMap((o) => (o.type === 'put' ? [o.valueBase64] : []))
}

/** Checks the users' clients' operations against their permissions (see the top of this file). */
export function checkPermissions(
  ops: readonly OpRecord[],
  users: Record<string, SoakUser>,
  oracle: readonly OracleEvent[],
  recoveries: readonly RecoveryCheck[],
  logins: Record<string, number>,
): AuthReport {
  const written = new Set(oracle.filter((e) => e.type === 'PUT').map((e) => e.kv.valueBase64))
  const firstRestart = recoveries.reduce((t, r) => Math.min(t, r.at), Infinity)
  const report: AuthReport = {
    users,
    denied: 0,
    deniedAnswers: {},
    deniedAfterFirstRestart: 0,
    okAfterFirstRestart: 0,
    logins,
    unauthenticated: 0,
    violations: [],
  }
  for (const rec of ops) {
    const user = users[rec.client]
    if (user === undefined) continue
    const answer = rec.outcome === 'ok' ? 'ok' : (rec.code ?? rec.outcome)
    if (answer === 'UNAUTHENTICATED' || answer === 'GRPC_UNAUTHENTICATED') report.unauthenticated++
    if (rec.start > firstRestart && answer === 'ok') report.okAfterFirstRestart++
    if (rec.start > firstRestart && answer === 'PERMISSION_DENIED') report.deniedAfterFirstRestart++
    const what = `op ${rec.id} of ${rec.client} (${user}, ${rec.op.type})`
    if (allowed(user, rec.op)) {
      if (answer === 'PERMISSION_DENIED') report.violations.push(`${what}: allowed, answered PERMISSION_DENIED`)
      continue
    }
    report.denied++
    report.deniedAnswers[answer] = (report.deniedAnswers[answer] ?? 0) + 1
    if (answer === 'ok') report.violations.push(`${what}: denied, answered ok`)
    if (valuesOf(rec.op).some((v) => written.has(v))) report.violations.push(`${what}: denied, yet applied`)
  }
  return report
}
