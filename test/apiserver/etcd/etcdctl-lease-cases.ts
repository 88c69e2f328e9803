/**
 * etcdctl cases for leases, lock and elect (which combine leases, txns and watches), maintenance
 * (endpoint status/health/hashkv, alarms, defrag, snapshot save), then put --ignore-value/--ignore-lease
 * and del --from-key. They continue the sequence of etcdctl-kv-cases.ts on the same store, so revisions
 * are exact from there (23 at the start). Checks are soft, as there.
 */
import { rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sleep } from '../../support/wait.js'
import { b64, linesOf, revision, type Case } from './etcdctl-kv-cases.js'
import type { EtcdctlSession } from './etcdctl-session.js'

const NOT_FOUND = 'etcdserver: requested lease not found'
const ids = { cluster_id: '<id>', member_id: '<id>', raft_term: '<id>' }

/** `lease list` prints hex ids one per line: name them like every other lease id. */
async function leaseList(s: EtcdctlSession): Promise<string[]> {
  const r = await s.run(['lease', 'list'], { unrecorded: true })
  const lines = (r.out as string).split('\n').filter((l) => l !== '')
  const named = lines.map((l) => (/^[0-9a-f]+$/.test(l) ? s.leases.hex(l) : l))
  s.record('lease list', named, r.code)
  return named
}

/** The hex id etcdctl printed for a lease name, or a placeholder that fails later commands visibly. */
function hexOf(s: EtcdctlSession, name: string): string {
  try {
    return s.leases.hexOf(name)
  } catch {
    s.fail(`no lease ${name} was granted`)
    return 'ffffffff'
  }
}

/** Grants lease `name` (the next one) with `ttl` and puts the keys with it; returns its hex id. */
async function grantWith(s: EtcdctlSession, name: string, ttl: number, kvs: [string, string][]): Promise<string> {
  s.check(await s.ok('lease', 'grant', String(ttl)), `lease ${name} granted with TTL(${ttl}s)\n`, `lease grant ${ttl}`)
  const hex = hexOf(s, name)
  for (const [k, v] of kvs) s.check(await s.ok('put', `--lease=${hex}`, k, v), 'OK\n', `put --lease ${k}`)
  return hex
}

export const leaseCases: Case[] = [
  {
    title: 'lease grant, put --lease, timetolive --keys, keep-alive --once, list, revoke (keys deleted)',
    async run(s) {
      const l1 = await grantWith(s, 'L1', 100, [
        ['l/a', '1'],
        ['l/b', '2'],
      ]) // revs 24, 25
      const ttl = await s.run(['lease', 'timetolive', '--keys', l1], { unrecorded: true })
      const m = /^lease L1 granted with TTL\(100s\), remaining\((\d+)s\), attached keys\(\[(.*)\]\)\n$/.exec(ttl.out as string)
      const remaining = Number(m?.[1])
      s.check(
        [remaining >= 90 && remaining <= 100, m?.[2]?.split(' ').sort()],
        [true, ['l/a', 'l/b']],
        `lease timetolive --keys: ${JSON.stringify(ttl.out)}`,
      )
      s.record('lease timetolive --keys L1 (sorted keys)', [m?.[2]?.split(' ').sort().join(' ') ?? String(ttl.out)])
      const ttlJson =
        ((await s.run(['lease', 'timetolive', '--keys', l1, '-w', 'json'], { unrecorded: true })).out as Record<string, unknown>[])[0] ?? {}
      const t = { ...ttlJson, ttl: '<ttl>', keys: ((ttlJson.keys ?? []) as string[]).sort() }
      s.check(
        t,
        { ...ids, revision: 25, id: 'L1', ttl: '<ttl>', 'granted-ttl': 100, keys: [b64('l/a'), b64('l/b')] },
        'lease timetolive --keys -w json',
      )
      s.record('lease timetolive --keys L1 -w json (ttl, sorted keys)', [JSON.stringify(t)])
      s.check(await s.ok('lease', 'keep-alive', '--once', l1), 'lease L1 keepalived with TTL(100)\n', 'lease keep-alive --once')
      s.check(
        await s.json('lease', 'keep-alive', '--once', l1),
        { ...ids, revision: 25, ID: 'L1', TTL: 100 },
        'lease keep-alive --once -w json',
      )
      s.check(await leaseList(s), ['found 1 leases', 'L1'], 'lease list')
      s.check(await s.json('lease', 'list'), { ...ids, revision: 25, leases: [{ id: 'L1' }] }, 'lease list -w json')

      s.check(await s.ok('lease', 'revoke', l1), 'lease L1 revoked\n', 'lease revoke') // rev 26: both keys in one revision
      s.check(await s.ok('get', '--prefix', 'l/'), '', 'keys gone after revoke')
      s.check(await revision(s, 'l/'), 26, 'revoke deletes all the keys of the lease in one revision')
      s.check(await s.ok('get', '--prefix', 'l/', '--rev=25', '--print-value-only'), '1\n2\n', 'the history before the revoke')
      const revoked = await s.run(['lease', 'revoke', l1])
      s.check([revoked.code, revoked.error], [1, `Error: failed to revoke lease (${NOT_FOUND})`], 'revoke a revoked lease')
      s.check((await s.run(['lease', 'keep-alive', '--once', l1])).error, `Error: ${NOT_FOUND}`, 'keep-alive a revoked lease')
      s.check((await s.run(['put', `--lease=${l1}`, 'l/x', '1'])).error, `Error: ${NOT_FOUND}`, 'put with a revoked lease')
      s.check((await s.run(['lease', 'timetolive', l1])).out, 'lease L1 already expired\n', 'timetolive of a revoked lease')
    },
  },
  {
    title: 'lease expiry deletes the attached keys in one revision, seen by a watch',
    async run(s) {
      const l2 = await grantWith(s, 'L2', 2, [
        ['l/c', '3'],
        ['l/d', '4'],
      ]) // revs 27, 28
      const granted = Date.now()
      while ((await s.run(['get', '--prefix', 'l/', '--keys-only'], { unrecorded: true })).out !== '' && Date.now() - granted < 8000) {
        await sleep(200)
      }
      const took = Date.now() - granted
      s.check(took > 1000 && took < 8000, true, `a lease of 2 s expires after 1-8 s (took ${took} ms)`)
      s.check(await revision(s, 'l/'), 29, 'expiry deletes both keys in one revision')
      s.check((await s.run(['lease', 'timetolive', l2])).out, 'lease L2 already expired\n', 'timetolive of an expired lease')
      s.check(await leaseList(s), ['found 0 leases'], 'lease list after expiry')
      const w = s.spawn('watch', '--prefix', 'l/', '--rev=24')
      try {
        // The keys of a lease go in key order, in one revision, on revoke and on expiry.
        const lines = await linesOf(s, w, 8 * 3, 'watch --prefix l/ --rev=24')
        s.check(
          lines,
          [
            'PUT',
            'l/a',
            '1',
            'PUT',
            'l/b',
            '2',
            'DELETE',
            'l/a',
            '',
            'DELETE',
            'l/b',
            '',
            'PUT',
            'l/c',
            '3',
            'PUT',
            'l/d',
            '4',
            'DELETE',
            'l/c',
            '',
            'DELETE',
            'l/d',
            '',
          ],
          'watch --prefix l/ --rev=24',
        )
        s.record('watch --prefix l/ --rev=24', lines)
      } finally {
        await w.stop('SIGTERM')
      }
      const hist = await s.json('get', 'l/c', '--rev=28')
      s.check(
        hist.kvs,
        [{ key: b64('l/c'), create_revision: 27, mod_revision: 27, version: 1, value: b64('3'), lease: 'L2' }],
        'get --rev=28 -w json shows the lease',
      )
    },
  },
  {
    title: 'lock: a second locker waits until the holder goes, then runs with ETCD_LOCK_KEY/REV',
    async run(s) {
      const a = s.spawn('lock', 'lock1')
      let b: ReturnType<EtcdctlSession['spawn']> | undefined
      try {
        // The holder prints its lock key and that key's value (empty), as `get` would.
        const held = await linesOf(s, a, 2, 'lock lock1')
        s.check(/^lock1\/[0-9a-f]+$/.test(held[0] ?? ''), true, `lock holder prints its key: ${held[0]}`)
        s.check(held[1], '', "then the lock key's empty value")
        s.record('lock lock1 (holder)', held)
        b = s.spawn('lock', 'lock1', '--', 'sh', '-c', 'echo "$ETCD_LOCK_KEY $ETCD_LOCK_REV"')
        await sleep(500)
        s.check(b.lines(), [], 'a second locker waits while the lock is held')
        await a.stop('SIGINT')
        s.check(await Promise.race([b.exited, sleep(5000).then(() => 'timeout')]), 0, 'the second locker gets the lock, runs and exits')
        s.record('lock lock1 -- sh -c echo $ETCD_LOCK_KEY $ETCD_LOCK_REV', b.lines())
        const [key, rev] = (b.lines()[0] ?? '').split(' ')
        s.check(
          [/^lock1\/[0-9a-f]+$/.test(key ?? ''), key !== held[0], Number(rev)],
          [true, true, 32],
          `ETCD_LOCK_KEY/REV: ${b.lines()[0]}`,
        ) // A put 30, B put 31, A's key deleted at 32
        s.check(await s.ok('get', '--prefix', 'lock1'), '', 'no lock keys left')
      } finally {
        await a.stop('SIGKILL')
        await b?.stop('SIGKILL')
      }
      s.check(await revision(s, 'lock1'), 33, 'revision after the locks') // B's key deleted on unlock
    },
  },
  {
    title: 'elect: campaign, observe with -l, leadership passes on when the leader quits',
    async run(s) {
      const a = s.spawn('elect', 'elect1', 'p1')
      const observer = s.spawn('elect', '-l', 'elect1')
      let b: ReturnType<EtcdctlSession['spawn']> | undefined
      try {
        const leaderA = await linesOf(s, a, 2, 'elect elect1 p1')
        s.check(leaderA[1], 'p1', 'the first candidate leads')
        s.check(await linesOf(s, observer, 2, 'elect -l'), leaderA, 'the observer sees the first leader')
        b = s.spawn('elect', 'elect1', 'p2')
        await sleep(500)
        s.check(b.lines(), [], 'the second candidate waits while the first leads')
        await a.stop('SIGINT')
        const leaderB = await linesOf(s, b, 2, 'elect elect1 p2')
        s.check([leaderB[1], leaderB[0] !== leaderA[0]], ['p2', true], 'the second candidate leads once the first quits')
        s.check(await linesOf(s, observer, 4, 'elect -l'), [...leaderA, ...leaderB], 'the observer sees both leaders')
        s.record('elect elect1 p1', leaderA)
        s.record('elect elect1 p2', leaderB)
        s.record('elect -l elect1', observer.lines())
        await b.stop('SIGINT')
        s.check(await s.ok('get', '--prefix', 'elect1'), '', 'no election keys left')
      } finally {
        await a.stop('SIGKILL')
        await b?.stop('SIGKILL')
        await observer.stop('SIGKILL')
      }
      s.check(await revision(s, 'elect1'), 37, 'revision after the election') // A 34, B 35, A gone 36, B resigned 37
    },
  },
  {
    title: 'endpoint status, health and hashkv; alarm list and disarm; defrag; serializable get; snapshot save',
    async run(s) {
      const printed = (await s.run(['endpoint', 'status', '-w', 'json'], { unrecorded: true })).out as unknown[]
      const status = (printed[0] ?? []) as { Endpoint: string; Status: Record<string, unknown> }[]
      const st = status[0]?.Status ?? {}
      s.check([status.length, status[0]?.Endpoint, st.header], [1, s.endpoint, { ...ids, revision: 37 }], 'endpoint status -w json')
      s.check(
        [/^3\.\d+\.\d+$/.test(String(st.version)), typeof st.dbSize === 'number' && st.dbSize > 0],
        [true, true],
        `endpoint status version and dbSize: ${JSON.stringify(st)}`,
      )
      s.record('endpoint status -w json (fields, revision)', [Object.keys(st).sort().join(','), JSON.stringify(st.header)])
      const table = (await s.run(['endpoint', 'status'], { unrecorded: true })).out as string
      const cols = table.trim().split(', ')
      s.check([cols[0], cols[4], cols[5]], ['<endpoint>', 'true', 'false'], 'endpoint status: endpoint, is leader, is learner')
      s.record('endpoint status (leader, learner)', [cols[4] ?? '', cols[5] ?? ''])
      // etcdctl 3.4 prints the health verdict on stderr.
      const health = await s.run(['endpoint', 'health'], { unrecorded: true })
      const verdict = health.stderr
        .split('\n')
        .filter((l) => l.startsWith(s.endpoint))
        .map((l) => l.replace(/took = \S+/, 'took = <t>').replace(s.endpoint, '<endpoint>'))
      s.check([health.code, verdict], [0, ['<endpoint> is healthy: successfully committed proposal: took = <t>']], 'endpoint health')
      s.record('endpoint health', verdict, health.code)
      const healthJson =
        ((await s.run(['endpoint', 'health', '-w', 'json'], { unrecorded: true })).out as { endpoint: string; health: boolean }[][])[0] ??
        []
      s.check(
        healthJson.map((h) => [h.endpoint, h.health]),
        [[s.endpoint, true]],
        'endpoint health -w json',
      )
      s.check(await s.ok('alarm', 'list'), '', 'alarm list')
      s.check(await s.ok('alarm', 'disarm'), '', 'alarm disarm with no alarm')
      s.check(await s.ok('defrag'), 'Finished defragmenting etcd member[<endpoint>]\n', 'defrag')
      s.check(await s.ok('get', '--consistency=s', '--prefix', 't/', '--keys-only'), 't/k\n\nt/new\n\n', 'serializable get')
      const hash = await s.run(['endpoint', 'hashkv'], { unrecorded: true })
      s.check([hash.code, /^<endpoint>, \d+\n$/.test(hash.out as string)], [0, true], `endpoint hashkv: ${JSON.stringify(hash.out)}`)
      const snap = join(tmpdir(), `kvlog-snap-${process.pid}-${Date.now()}.db`)
      try {
        const saved = await s.run(['snapshot', 'save', snap], { unrecorded: true })
        s.check([saved.code, saved.out], [0, `Snapshot saved at ${snap}\n`], 'snapshot save')
        s.check((await stat(snap).catch(() => ({ size: 0 }))).size > 0, true, 'the snapshot file is not empty')
        s.record('snapshot save <file>', [(saved.out as string).replace(snap, '<file>').trim()], saved.code)
      } finally {
        await rm(snap, { force: true })
      }
    },
  },
  {
    title: 'put --ignore-value and --ignore-lease; del --from-key',
    async run(s) {
      s.check(await revision(s), 37, 'revision at the start')
      s.check(
        (await s.run(['put', '--ignore-value', 'i/k'])).error,
        'Error: etcdserver: key not found',
        'put --ignore-value on a missing key',
      )
      s.check(
        (await s.run(['put', '--ignore-lease', 'i/k', 'v'])).error,
        'Error: etcdserver: key not found',
        'put --ignore-lease on a missing key',
      )
      s.check(await s.ok('put', 'i/k', 'v1'), 'OK\n', 'put i/k v1') // 38
      const granted = await s.ok('lease', 'grant', '100')
      const name = /^lease (L\d+) granted with TTL\(100s\)\n$/.exec(granted)?.[1] ?? 'L?'
      s.check(name !== 'L?', true, `lease grant 100: ${granted}`)
      const hex = hexOf(s, name)
      s.check(await s.ok('put', `--lease=${hex}`, 'i/k', 'v2'), 'OK\n', 'put --lease i/k v2') // 39
      s.check(await s.ok('put', '--ignore-value', 'i/k'), 'OK\n', 'put --ignore-value') // 40: value kept, lease dropped
      s.check(
        (await s.json('get', 'i/k')).kvs,
        [{ key: b64('i/k'), create_revision: 38, mod_revision: 40, version: 3, value: b64('v2') }],
        'after --ignore-value',
      )
      s.check(await s.ok('put', `--lease=${hex}`, 'i/k', 'v3'), 'OK\n', 'put --lease i/k v3') // 41
      s.check(await s.ok('put', '--ignore-lease', 'i/k', 'v4'), 'OK\n', 'put --ignore-lease') // 42: lease kept
      s.check(
        (await s.json('get', 'i/k')).kvs,
        [{ key: b64('i/k'), create_revision: 38, mod_revision: 42, version: 5, value: b64('v4'), lease: name }],
        'after --ignore-lease',
      )
      s.check(await s.ok('get', '--from-key', 'i/', '--keys-only'), 'i/k\n\nt/k\n\nt/new\n\nw/b\n\nx/outside\n\nz\n\n', 'get --from-key')
      s.check(await s.ok('del', '--from-key', 'i/'), '6\n', 'del --from-key') // 43
      s.check(await s.ok('get', '--prefix', ''), '', 'the store is empty')
      s.check(await s.ok('lease', 'revoke', hex), `lease ${name} revoked\n`, 'revoke a lease whose keys are gone')
      s.check(await revision(s), 43, 'revoking a lease without keys writes nothing')
    },
  },
]
