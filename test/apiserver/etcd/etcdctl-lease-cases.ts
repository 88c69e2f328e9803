/**
 * etcdctl cases for leases, lock and elect (which combine leases, txns and watches) and maintenance
 * (endpoint status/health, alarm list, snapshot save). They continue the sequence of etcdctl-kv-cases.ts
 * on the same store, so revisions are exact from there (23 at the start).
 */
import { rm, stat } from 'node:fs/promises'
import { expect } from 'chai'
import type { Case } from './etcdctl-kv-cases.js'
import type { EtcdctlSession } from './etcdctl-session.js'
import { sleep } from '../../support/wait.js'

const b64 = (s: string) => Buffer.from(s).toString('base64')
const NOT_FOUND = 'etcdserver: requested lease not found'

async function revisionAfter(s: EtcdctlSession, prefix: string): Promise<number> {
  const r = await s.json('get', '--prefix', prefix, '--keys-only')
  return (r.header as { revision: number }).revision
}

/** `lease list` prints hex ids one per line: name them like every other lease id. */
async function leaseList(s: EtcdctlSession): Promise<string[]> {
  const r = await s.run(['lease', 'list'], { unrecorded: true })
  const lines = (r.out as string).split('\n').filter((l) => l !== '')
  const named = lines.map((l) => (/^[0-9a-f]+$/.test(l) ? s.leases.hex(l) : l))
  s.record('lease list', named, r.code)
  return named
}

export const leaseCases: Case[] = [
  {
    title: 'lease grant, put --lease, timetolive --keys, keep-alive --once, list, revoke (keys deleted)',
    async run(s) {
      expect(await s.ok('lease', 'grant', '100')).to.equal('lease L1 granted with TTL(100s)\n')
      const l1 = s.leases.hexOf('L1')
      expect(await s.ok('put', `--lease=${l1}`, 'l/a', '1')).to.equal('OK\n') // rev 24
      expect(await s.ok('put', `--lease=${l1}`, 'l/b', '2')).to.equal('OK\n') // rev 25
      const ttl = await s.run(['lease', 'timetolive', '--keys', l1], { unrecorded: true })
      const m = /^lease L1 granted with TTL\(100s\), remaining\((\d+)s\), attached keys\(\[(.*)\]\)\n$/.exec(ttl.out as string)
      expect(m, String(ttl.out)).to.not.equal(null)
      expect(Number(m![1])).to.be.within(90, 100)
      s.record('lease timetolive --keys L1 (remaining, sorted keys)', [m![2]!.split(' ').sort().join(' ')])
      expect(m![2]!.split(' ').sort()).to.deep.equal(['l/a', 'l/b'])
      const ttlJson = (await s.run(['lease', 'timetolive', '--keys', l1, '-w', 'json'], { unrecorded: true })).out as Record<string, unknown>[]
      const t = { ...ttlJson[0]!, ttl: '<ttl>', keys: ((ttlJson[0]!.keys ?? []) as string[]).sort() }
      expect(t).to.deep.equal({ cluster_id: '<id>', member_id: '<id>', revision: 25, raft_term: '<id>', id: 'L1', ttl: '<ttl>', 'granted-ttl': 100, keys: [b64('l/a'), b64('l/b')] })
      s.record('lease timetolive --keys L1 -w json (ttl, sorted keys)', [JSON.stringify(t)])
      expect(await s.ok('lease', 'keep-alive', '--once', l1)).to.equal('lease L1 keepalived with TTL(100)\n')
      expect(await s.json('lease', 'keep-alive', '--once', l1)).to.deep.equal({ cluster_id: '<id>', member_id: '<id>', revision: 25, raft_term: '<id>', ID: 'L1', TTL: 100 })
      expect(await leaseList(s)).to.deep.equal(['found 1 leases', 'L1'])
      expect(await s.json('lease', 'list')).to.deep.equal({ cluster_id: '<id>', member_id: '<id>', revision: 25, raft_term: '<id>', leases: [{ id: 'L1' }] })

      expect(await s.ok('lease', 'revoke', l1)).to.equal('lease L1 revoked\n') // rev 26: both keys in one revision
      expect(await s.ok('get', '--prefix', 'l/')).to.equal('')
      expect(await revisionAfter(s, 'l/')).to.equal(26)
      expect(await s.ok('get', '--prefix', 'l/', '--rev=25', '--print-value-only')).to.equal('1\n2\n')
      const revoked = await s.run(['lease', 'revoke', l1])
      expect([revoked.code, revoked.error]).to.deep.equal([1, `Error: failed to revoke lease (${NOT_FOUND})`])
      expect((await s.run(['lease', 'keep-alive', '--once', l1])).error).to.equal(`Error: ${NOT_FOUND}`)
      expect((await s.run(['put', `--lease=${l1}`, 'l/x', '1'])).error).to.equal(`Error: ${NOT_FOUND}`)
      expect((await s.run(['lease', 'timetolive', l1])).out).to.equal('lease L1 already expired\n')
    },
  },
  {
    title: 'lease expiry deletes the attached keys in one revision, seen by a watch',
    async run(s) {
      expect(await s.ok('lease', 'grant', '2')).to.equal('lease L2 granted with TTL(2s)\n')
      const l2 = s.leases.hexOf('L2')
      expect(await s.ok('put', `--lease=${l2}`, 'l/c', '3')).to.equal('OK\n') // rev 27
      expect(await s.ok('put', `--lease=${l2}`, 'l/d', '4')).to.equal('OK\n') // rev 28
      const granted = Date.now()
      while ((await s.run(['get', '--prefix', 'l/', '--keys-only'], { unrecorded: true })).out !== '') {
        expect(Date.now() - granted, 'lease of 2 s still alive').to.be.below(8000)
        await sleep(200)
      }
      expect(Date.now() - granted).to.be.above(1000)
      expect(await revisionAfter(s, 'l/')).to.equal(29)
      expect((await s.run(['lease', 'timetolive', l2])).out).to.equal('lease L2 already expired\n')
      expect(await leaseList(s)).to.deep.equal(['found 0 leases'])
      const w = s.spawn('watch', '--prefix', 'l/', '--rev=24')
      try {
        // The keys of a lease go in key order, in one revision, on revoke and on expiry.
        const lines = await w.waitLines(8 * 3)
        expect(lines).to.deep.equal([
          'PUT', 'l/a', '1', 'PUT', 'l/b', '2', 'DELETE', 'l/a', '', 'DELETE', 'l/b', '',
          'PUT', 'l/c', '3', 'PUT', 'l/d', '4', 'DELETE', 'l/c', '', 'DELETE', 'l/d', '',
        ])
        s.record('watch --prefix l/ --rev=24', lines)
      } finally {
        await w.stop('SIGTERM')
      }
      const hist = await s.json('get', 'l/c', '--rev=28')
      expect(hist.kvs).to.deep.equal([{ key: b64('l/c'), create_revision: 27, mod_revision: 27, version: 1, value: b64('3'), lease: 'L2' }])
    },
  },
  {
    title: 'lock: a second locker waits until the holder goes, then runs with ETCD_LOCK_KEY/REV',
    async run(s) {
      const a = s.spawn('lock', 'lock1')
      let b: ReturnType<EtcdctlSession['spawn']> | undefined
      try {
        const held = await a.waitLines(1)
        expect(held[0]).to.match(/^lock1\/[0-9a-f]+$/)
        b = s.spawn('lock', 'lock1', '--', 'sh', '-c', 'echo "$ETCD_LOCK_KEY $ETCD_LOCK_REV"')
        await sleep(500)
        expect(b.lines(), 'second locker got the lock while it was held').to.deep.equal([])
        s.record('lock lock1 (holder)', held)
        await a.stop('SIGINT')
        expect(await b.exited).to.equal(0)
        s.record('lock lock1 -- sh -c echo $ETCD_LOCK_KEY $ETCD_LOCK_REV', b.lines())
        expect(b.lines()).to.have.length(1)
        const [key, rev] = b.lines()[0]!.split(' ')
        expect(key).to.match(/^lock1\/[0-9a-f]+$/)
        expect(key).to.not.equal(held[0])
        expect(Number(rev)).to.equal(32) // A put 30, B put 31, A's key deleted at 32
        expect(await s.ok('get', '--prefix', 'lock1')).to.equal('')
      } finally {
        await a.stop('SIGKILL')
        await b?.stop('SIGKILL')
      }
      expect(await revisionAfter(s, 'lock1')).to.equal(33) // B's key deleted on unlock
    },
  },
  {
    title: 'elect: campaign, observe with -l, leadership passes on when the leader quits',
    async run(s) {
      const a = s.spawn('elect', 'elect1', 'p1')
      const observer = s.spawn('elect', '-l', 'elect1')
      let b: ReturnType<EtcdctlSession['spawn']> | undefined
      try {
        const leaderA = await a.waitLines(2)
        expect(leaderA[1]).to.equal('p1')
        expect(await observer.waitLines(2)).to.deep.equal(leaderA)
        b = s.spawn('elect', 'elect1', 'p2')
        await sleep(500)
        expect(b.lines(), 'second candidate elected while the first leads').to.deep.equal([])
        await a.stop('SIGINT')
        const leaderB = await b.waitLines(2)
        expect(leaderB[1]).to.equal('p2')
        expect(leaderB[0]).to.not.equal(leaderA[0])
        expect(await observer.waitLines(4)).to.deep.equal([...leaderA, ...leaderB])
        s.record('elect elect1 p1', leaderA)
        s.record('elect elect1 p2', leaderB)
        s.record('elect -l elect1', observer.lines())
        await b.stop('SIGINT')
        expect(await s.ok('get', '--prefix', 'elect1')).to.equal('')
      } finally {
        await a.stop('SIGKILL')
        await b?.stop('SIGKILL')
        await observer.stop('SIGKILL')
      }
      expect(await revisionAfter(s, 'elect1')).to.equal(37) // A 34, B 35, A gone 36, B resigned 37
    },
  },
  {
    title: 'endpoint status and health, alarm list, snapshot save',
    async run(s) {
      const printed = (await s.run(['endpoint', 'status', '-w', 'json'], { unrecorded: true })).out as unknown[]
      const status = printed[0] as { Endpoint: string; Status: Record<string, unknown> }[]
      expect(status).to.have.length(1)
      expect(status[0]!.Endpoint).to.equal(s.endpoint)
      const st = status[0]!.Status
      expect(st.header).to.deep.equal({ cluster_id: '<id>', member_id: '<id>', revision: 37, raft_term: '<id>' })
      expect(st.version).to.match(/^3\.\d+\.\d+$/)
      expect(st.dbSize).to.be.a('number').above(0)
      s.record('endpoint status -w json (fields, revision)', [Object.keys(st).sort().join(','), JSON.stringify(st.header)])
      const table = (await s.run(['endpoint', 'status'], { unrecorded: true })).out as string
      const cols = table.trim().split(', ')
      expect(cols[0]).to.equal(s.endpoint)
      expect(cols[4], 'is leader').to.equal('true')
      expect(cols[5], 'is learner').to.equal('false')
      s.record('endpoint status (leader, learner)', [cols[4]!, cols[5]!])
      // etcdctl 3.4 prints the health verdict on stderr.
      const health = await s.run(['endpoint', 'health'], { unrecorded: true })
      expect(health.code).to.equal(0)
      const verdict = health.stderr.split('\n').filter((l) => l.startsWith(s.endpoint))
      expect(verdict).to.have.length(1)
      expect(verdict[0]).to.match(new RegExp(`^${s.endpoint} is healthy: successfully committed proposal: took = \\S+$`))
      s.record('endpoint health', [verdict[0]!.replace(/took = \S+/, 'took = <t>').replace(s.endpoint, '<endpoint>')], health.code)
      const healthJson = (await s.run(['endpoint', 'health', '-w', 'json'], { unrecorded: true })).out as { endpoint: string; health: boolean }[][]
      expect(healthJson[0]!.map((h) => [h.endpoint, h.health])).to.deep.equal([[s.endpoint, true]])
      expect(await s.ok('alarm', 'list')).to.equal('')
      const snap = `${process.env.TMPDIR ?? '/tmp'}/kvlog-snap-${process.pid}-${Date.now()}.db`
      const saved = await s.run(['snapshot', 'save', snap], { unrecorded: true })
      expect([saved.code, saved.out]).to.deep.equal([0, `Snapshot saved at ${snap}\n`])
      expect((await stat(snap)).size).to.be.above(0)
      await rm(snap, { force: true })
      s.record('snapshot save <file>', [(saved.out as string).replace(snap, '<file>').trim()], saved.code)
    },
  },
]
