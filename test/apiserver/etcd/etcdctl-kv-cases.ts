/**
 * etcdctl cases for the key-value API: put/get with every range option, del, txn from stdin, watch and
 * compaction. They run in order on a fresh store (revision 1), so every revision below is exact, and the
 * same sequence on two stores must give identical transcripts.
 */
import { expect } from 'chai'
import type { EtcdctlSession } from './etcdctl-session.js'
import { sleep } from '../../support/wait.js'

export interface Case {
  title: string
  run(s: EtcdctlSession): Promise<void>
}

const b64 = (s: string) => Buffer.from(s).toString('base64')

/** The header etcdctl prints with -w json, normalized: only the revision is compared. */
const header = (revision: number) => ({ cluster_id: '<id>', member_id: '<id>', revision, raft_term: '<id>' })

const COMPACTED = 'Error: etcdserver: mvcc: required revision has been compacted'
const FUTURE = 'Error: etcdserver: mvcc: required revision is a future revision'

/** Store revision as the server reports it (a range on an absent key changes nothing). */
async function revision(s: EtcdctlSession): Promise<number> {
  const r = await s.json('get', 'no-such-key')
  return (r.header as { revision: number }).revision
}

export const kvCases: Case[] = [
  {
    title: 'put and get: single key, ranges, --prefix, --from-key, --rev, --limit (-w json)',
    async run(s) {
      for (const [k, v] of [['foo/a', '1'], ['foo/b', '2'], ['foo/c', '3'], ['foo/a', '11'], ['fop', '9'], ['z', '0']]) {
        expect(await s.ok('put', k!, v!)).to.equal('OK\n')
      }
      expect(await s.ok('put', '--prev-kv', 'foo/b', '22')).to.equal('OK\nfoo/b\n2\n') // rev 8
      expect(await s.ok('put', 'foo/a', '111')).to.equal('OK\n') // rev 9
      expect(await s.json('get', 'foo/a')).to.deep.equal({
        header: header(9),
        kvs: [{ key: b64('foo/a'), create_revision: 2, mod_revision: 9, version: 3, value: b64('111') }],
        count: 1,
      })
      expect(await s.ok('get', '--prefix', 'foo/')).to.equal('foo/a\n111\nfoo/b\n22\nfoo/c\n3\n')
      expect(await s.ok('get', '--from-key', 'foo/c')).to.equal('foo/c\n3\nfop\n9\nz\n0\n')
      expect(await s.ok('get', 'foo/a', 'foo/c')).to.equal('foo/a\n111\nfoo/b\n22\n')
      expect(await s.ok('get', '--prefix', 'foo/', '--rev=3')).to.equal('foo/a\n1\nfoo/b\n2\n')
      expect(await s.ok('get', '--prefix', 'foo/', '--rev=5')).to.equal('foo/a\n11\nfoo/b\n2\nfoo/c\n3\n')
      expect(await s.ok('get', 'no-such-key')).to.equal('')
      const limited = await s.json('get', '--prefix', 'foo/', '--limit=2')
      expect(limited.count).to.equal(3)
      expect(limited.more).to.equal(true)
      expect((limited.kvs as { key: string }[]).map((kv) => kv.key)).to.deep.equal([b64('foo/a'), b64('foo/b')])
      const atRev = await s.json('get', '--prefix', 'foo/', '--rev=4', '--limit=1')
      expect(atRev).to.deep.equal({
        header: header(9),
        kvs: [{ key: b64('foo/a'), create_revision: 2, mod_revision: 2, version: 1, value: b64('1') }],
        more: true,
        count: 3,
      })
      const future = await s.run(['get', 'foo/a', '--rev=100'])
      expect(future.code).to.equal(1)
      expect(future.error).to.equal(FUTURE)
    },
  },
  {
    title: 'get: --keys-only, --sort-by, --order, --print-value-only',
    async run(s) {
      expect(await s.ok('get', '--prefix', 'foo/', '--keys-only')).to.equal('foo/a\n\nfoo/b\n\nfoo/c\n\n')
      expect(await s.ok('get', '--prefix', 'foo/', '--sort-by=MODIFY', '--order=DESCEND', '--print-value-only')).to.equal('111\n22\n3\n')
      expect(await s.ok('get', '--prefix', '', '--sort-by=VALUE', '--order=ASCEND', '--keys-only')).to.equal('z\n\nfoo/a\n\nfoo/b\n\nfoo/c\n\nfop\n\n')
      expect(await s.ok('get', '--prefix', 'foo/', '--sort-by=CREATE', '--order=DESCEND', '--keys-only')).to.equal('foo/c\n\nfoo/b\n\nfoo/a\n\n')
      expect(await s.ok('get', '--prefix', 'foo/', '--sort-by=VERSION', '--order=ASCEND', '--print-value-only')).to.equal('3\n22\n111\n')
      expect(await s.ok('get', '--prefix', '', '--order=DESCEND', '--limit=2', '--keys-only')).to.equal('z\n\nfop\n\n')
      const keysOnly = await s.json('get', 'foo/c', '--keys-only')
      expect(keysOnly.kvs).to.deep.equal([{ key: b64('foo/c'), create_revision: 4, mod_revision: 4, version: 1 }])
    },
  },
  {
    title: 'del: one key with --prev-kv, absent key (no new revision), --prefix',
    async run(s) {
      expect(await s.ok('del', '--prev-kv', 'foo/a')).to.equal('1\nfoo/a\n111\n') // rev 10
      expect(await s.json('del', 'no-such-key')).to.deep.equal({ header: header(10) })
      expect(await s.ok('del', '--prefix', 'foo/')).to.equal('2\n') // rev 11
      expect(await s.ok('get', '--prefix', 'foo/')).to.equal('')
      expect(await s.json('del', '--prefix', 'fo', '--prev-kv')).to.deep.equal({
        header: header(12),
        deleted: 1,
        prev_kvs: [{ key: b64('fop'), create_revision: 6, mod_revision: 6, version: 1, value: b64('9') }],
      })
      expect(await s.ok('get', '--prefix', '')).to.equal('z\n0\n')
      expect(await s.ok('get', '--prefix', 'foo/', '--rev=10')).to.equal('foo/b\n22\nfoo/c\n3\n')
    },
  },
  {
    title: 'txn from stdin: compares on value, version, create, mod; success and failure branches',
    async run(s) {
      expect(await s.ok('put', 't/k', 'v')).to.equal('OK\n') // rev 13
      const all = 'value("t/k") = "v"\nversion("t/k") = "1"\ncreate("t/k") = "13"\nmod("t/k") = "13"\n\nput t/k v2\nget t/k\n\nput t/k never\n\n'
      expect((await s.run(['txn'], { input: all })).out).to.equal('SUCCESS\n\nOK\n\nt/k\nv2\n') // rev 14
      const fails = 'value("t/k") = "zz"\n\nput t/k never\n\nput t/f 1\nget t/k\n\n'
      expect((await s.run(['txn'], { input: fails })).out).to.equal('FAILURE\n\nOK\n\nt/k\nv2\n') // rev 15
      const ordered = 'mod("t/k") > "13"\nversion("t/k") < "3"\ncreate("t/k") != "0"\nvalue("t/k") > "v"\n\ndel t/f\n\n\n'
      expect((await s.run(['txn'], { input: ordered })).out).to.equal('SUCCESS\n\n1\n') // rev 16
      // A missing key: its mod/create/version are 0; a value compare on it is false whatever the operator.
      const absent = await s.run(['txn', '-w', 'json'], { input: 'value("t/missing") != "x"\n\nput t/x 1\n\nget t/k --keys-only\n\n' })
      expect(absent.out).to.deep.equal([{
        header: header(16),
        responses: [{ Response: { ResponseRange: { header: { revision: 16 }, kvs: [{ key: b64('t/k'), create_revision: 13, mod_revision: 14, version: 2 }], count: 1 } } }],
      }])
      const create = await s.run(['txn', '-w', 'json'], { input: 'mod("t/new") = "0"\n\nput t/new 1\n\n\n' }) // rev 17
      expect(create.out).to.deep.equal([{ header: header(17), succeeded: true, responses: [{ Response: { ResponsePut: { header: { revision: 17 } } } }] }])
      const readOnly = await s.run(['txn', '-w', 'json'], { input: 'version("t/new") = "1"\n\nget t/nothing\n\n\n' })
      expect(readOnly.out).to.deep.equal([{ header: header(17), succeeded: true, responses: [{ Response: { ResponseRange: { header: { revision: 17 } } } }] }])
      const dup = await s.run(['txn'], { input: '\nput t/d 1\nput t/d 2\n\n\n' })
      expect(dup.error).to.equal('Error: etcdserver: duplicate key given in txn request')
      expect(await s.json('get', 't/', '--prefix', '--keys-only')).to.have.nested.property('header.revision', 17)
    },
  },
  {
    title: 'watch: history from --rev with --prev-kv, then live events',
    async run(s) {
      expect(await s.ok('put', 'w/a', '1')).to.equal('OK\n') // rev 18
      expect(await s.ok('put', 'w/a', '2')).to.equal('OK\n') // rev 19
      expect(await s.ok('del', 'w/a')).to.equal('1\n') // rev 20
      const w = s.spawn('watch', '--prefix', 'w/', '--rev=18', '--prev-kv')
      try {
        // With --prev-kv etcdctl prints the previous kv before the new one.
        await w.waitLines(3 + 5 + 5)
        await sleep(200)
        expect(await s.ok('put', 'w/b', '3')).to.equal('OK\n') // rev 21, live
        expect(await s.ok('put', 'x/outside', '4')).to.equal('OK\n') // rev 22, not watched
        expect(await s.ok('put', 'w/b', '5')).to.equal('OK\n') // rev 23, live
        const lines = await w.waitLines(13 + 3 + 5)
        expect(lines).to.deep.equal([
          'PUT', 'w/a', '1',
          'PUT', 'w/a', '1', 'w/a', '2',
          'DELETE', 'w/a', '2', 'w/a', '',
          'PUT', 'w/b', '3',
          'PUT', 'w/b', '3', 'w/b', '5',
        ])
        s.record('watch --prefix w/ --rev=18 --prev-kv', lines)
      } finally {
        await w.stop('SIGTERM')
      }
    },
  },
  {
    title: 'watch -w json: events with kv, prev_kv and DELETE type',
    async run(s) {
      const w = s.spawn('watch', 'w/b', '--rev=19', '--prev-kv', '-w', 'json')
      try {
        const events: unknown[] = []
        const deadline = Date.now() + 10_000
        while (events.length < 2 && Date.now() < deadline) {
          events.length = 0
          for (const line of w.lines()) events.push(...((JSON.parse(line) as { Events: unknown[] }).Events))
          await sleep(20)
        }
        // Responses may group events differently; the events themselves must match.
        expect(events).to.deep.equal([
          { kv: { key: b64('w/b'), create_revision: 21, mod_revision: 21, version: 1, value: b64('3') } },
          {
            kv: { key: b64('w/b'), create_revision: 21, mod_revision: 23, version: 2, value: b64('5') },
            prev_kv: { key: b64('w/b'), create_revision: 21, mod_revision: 21, version: 1, value: b64('3') },
          },
        ])
        s.record('watch w/b --rev=19 --prev-kv -w json (events)', events.map((e) => JSON.stringify(e)))
      } finally {
        await w.stop('SIGTERM')
      }
    },
  },
  {
    title: 'compaction: get and watch below the compact revision fail the same way; --physical',
    async run(s) {
      expect(await revision(s)).to.equal(23)
      expect(await s.ok('compact', '20')).to.equal('compacted revision 20\n')
      const old = await s.run(['get', 'w/a', '--rev=19'])
      expect([old.code, old.error]).to.deep.equal([1, COMPACTED])
      expect(await s.ok('get', '--prefix', 'foo/', '--rev=20')).to.equal('') // the compact revision itself is readable
      expect(await s.ok('get', '--prefix', 't/', '--rev=20', '--keys-only')).to.equal('t/k\n\nt/new\n\n')
      const w = s.spawn('watch', '--prefix', 'w/', '--rev=19')
      const code = await Promise.race([w.exited, sleep(10_000).then(() => 'timeout')])
      expect(code).to.not.equal('timeout')
      // etcdctl prints both lines to stderr and exits non-zero.
      const said = w.stderr().split('\n').filter((l) => l !== '' && !l.startsWith('{'))
      expect(said).to.deep.equal(['watch was canceled (etcdserver: mvcc: required revision has been compacted)', 'Error: watch is canceled by the server'])
      expect(code).to.not.equal(0)
      s.record('watch --prefix w/ --rev=19 (stderr)', said, code)
      const again = await s.run(['compact', '19'])
      expect(again.error).to.equal(COMPACTED)
      const future = await s.run(['compact', '1000'])
      expect(future.error).to.equal(FUTURE)
      expect(await s.ok('compact', '--physical', '23')).to.equal('compacted revision 23\n')
      const gone = await s.run(['get', 'w/b', '--rev=22'])
      expect(gone.error).to.equal(COMPACTED)
      expect(await s.ok('get', 'w/b', '--rev=23')).to.equal('w/b\n5\n')
      expect(await revision(s)).to.equal(23) // compaction is not a write
    },
  },
]
