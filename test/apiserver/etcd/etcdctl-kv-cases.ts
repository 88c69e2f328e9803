/**
 * etcdctl cases for the key-value API: put/get with every range option, del, txn from stdin, watch and
 * compaction. They run in order on a fresh store (revision 1), so every revision below is exact, and the
 * same sequence on two stores must give identical transcripts. Checks are soft (s.check): a case runs
 * all its commands even after a difference, so later revisions stay comparable.
 */
import { sleep } from '../../support/wait.js'
import type { EtcdctlSession } from './etcdctl-session.js'

export interface Case {
  title: string
  run(s: EtcdctlSession): Promise<void>
}

export const b64 = (s: string) => Buffer.from(s).toString('base64')

/** The header etcdctl prints with -w json, normalized: only the revision is compared. */
export const header = (revision: number) => ({ cluster_id: '<id>', member_id: '<id>', revision, raft_term: '<id>' })

const COMPACTED = 'Error: etcdserver: mvcc: required revision has been compacted'
const FUTURE = 'Error: etcdserver: mvcc: required revision is a future revision'

/** Store revision as the server reports it (a range on an absent key changes nothing). */
export async function revision(s: EtcdctlSession, prefix = 'no-such-key'): Promise<unknown> {
  const r = await s.json('get', '--prefix', prefix, '--keys-only')
  return (r.header as { revision?: number } | undefined)?.revision
}

/** Waits for a long-running etcdctl to print n lines; a shortfall is a soft failure, not a stop. */
export async function linesOf(s: EtcdctlSession, p: ReturnType<EtcdctlSession['spawn']>, n: number, what: string): Promise<string[]> {
  try {
    // The first n lines only: whatever the process prints next may or may not have arrived yet, on either
    // server, and the two runs are compared exactly.
    return (await p.waitLines(n, 5000)).slice(0, n)
  } catch (e) {
    s.fail(`${what}: ${(e as Error).message}`)
    return p.lines()
  }
}

export const kvCases: Case[] = [
  {
    title: 'put and get: single key, ranges, --prefix, --from-key, --rev, --limit (-w json)',
    async run(s) {
      for (const [k, v] of [
        ['foo/a', '1'],
        ['foo/b', '2'],
        ['foo/c', '3'],
        ['foo/a', '11'],
        ['fop', '9'],
        ['z', '0'],
      ]) {
        s.check(await s.ok('put', k!, v!), 'OK\n', `put ${k} ${v}`)
      }
      s.check(await s.ok('put', '--prev-kv', 'foo/b', '22'), 'OK\nfoo/b\n2\n', 'put --prev-kv') // rev 8
      s.check(await s.ok('put', 'foo/a', '111'), 'OK\n', 'put foo/a 111') // rev 9
      s.check(
        await s.json('get', 'foo/a'),
        {
          header: header(9),
          kvs: [{ key: b64('foo/a'), create_revision: 2, mod_revision: 9, version: 3, value: b64('111') }],
          count: 1,
        },
        'get -w json',
      )
      s.check(await s.ok('get', '--prefix', 'foo/'), 'foo/a\n111\nfoo/b\n22\nfoo/c\n3\n', 'get --prefix')
      s.check(await s.ok('get', '--from-key', 'foo/c'), 'foo/c\n3\nfop\n9\nz\n0\n', 'get --from-key')
      s.check(await s.ok('get', 'foo/a', 'foo/c'), 'foo/a\n111\nfoo/b\n22\n', 'get key range_end')
      s.check(await s.ok('get', '--prefix', 'foo/', '--rev=3'), 'foo/a\n1\nfoo/b\n2\n', 'get --rev=3')
      s.check(await s.ok('get', '--prefix', 'foo/', '--rev=5'), 'foo/a\n11\nfoo/b\n2\nfoo/c\n3\n', 'get --rev=5')
      s.check(await s.ok('get', 'no-such-key'), '', 'get absent key')
      const limited = await s.json('get', '--prefix', 'foo/', '--limit=2')
      s.check(
        [limited.count, limited.more, (limited.kvs as { key: string }[] | undefined)?.map((kv) => kv.key)],
        [3, true, [b64('foo/a'), b64('foo/b')]],
        'get --limit=2: count, more, keys',
      )
      s.check(
        await s.json('get', '--prefix', 'foo/', '--rev=4', '--limit=1'),
        {
          header: header(9),
          kvs: [{ key: b64('foo/a'), create_revision: 2, mod_revision: 2, version: 1, value: b64('1') }],
          more: true,
          count: 3,
        },
        'get --rev=4 --limit=1 -w json',
      )
      const future = await s.run(['get', 'foo/a', '--rev=100'])
      s.check([future.code, future.error], [1, FUTURE], 'get at a future revision')
    },
  },
  {
    title: 'get: --keys-only, --sort-by, --order, --print-value-only',
    async run(s) {
      s.check(await s.ok('get', '--prefix', 'foo/', '--keys-only'), 'foo/a\n\nfoo/b\n\nfoo/c\n\n', '--keys-only')
      s.check(
        await s.ok('get', '--prefix', 'foo/', '--sort-by=MODIFY', '--order=DESCEND', '--print-value-only'),
        '111\n22\n3\n',
        'MODIFY DESCEND',
      )
      s.check(
        await s.ok('get', '--prefix', '', '--sort-by=VALUE', '--order=ASCEND', '--keys-only'),
        'z\n\nfoo/a\n\nfoo/b\n\nfoo/c\n\nfop\n\n',
        'VALUE ASCEND',
      )
      s.check(
        await s.ok('get', '--prefix', 'foo/', '--sort-by=CREATE', '--order=DESCEND', '--keys-only'),
        'foo/c\n\nfoo/b\n\nfoo/a\n\n',
        'CREATE DESCEND',
      )
      s.check(
        await s.ok('get', '--prefix', 'foo/', '--sort-by=VERSION', '--order=ASCEND', '--print-value-only'),
        '3\n22\n111\n',
        'VERSION ASCEND',
      )
      s.check(await s.ok('get', '--prefix', '', '--order=DESCEND', '--limit=2', '--keys-only'), 'z\n\nfop\n\n', 'DESCEND --limit=2')
      const keysOnly = await s.json('get', 'foo/c', '--keys-only')
      s.check(keysOnly.kvs, [{ key: b64('foo/c'), create_revision: 4, mod_revision: 4, version: 1 }], '--keys-only -w json')
    },
  },
  {
    title: 'del: one key with --prev-kv, absent key (no new revision), --prefix',
    async run(s) {
      s.check(await s.ok('del', '--prev-kv', 'foo/a'), '1\nfoo/a\n111\n', 'del --prev-kv') // rev 10
      s.check(await s.json('del', 'no-such-key'), { header: header(10) }, 'del of an absent key writes nothing')
      s.check(await s.ok('del', '--prefix', 'foo/'), '2\n', 'del --prefix') // rev 11
      s.check(await s.ok('get', '--prefix', 'foo/'), '', 'get after del --prefix')
      s.check(
        await s.json('del', '--prefix', 'fo', '--prev-kv'),
        {
          header: header(12),
          deleted: 1,
          prev_kvs: [{ key: b64('fop'), create_revision: 6, mod_revision: 6, version: 1, value: b64('9') }],
        },
        'del --prefix --prev-kv -w json',
      )
      s.check(await s.ok('get', '--prefix', ''), 'z\n0\n', 'get everything')
      s.check(await s.ok('get', '--prefix', 'foo/', '--rev=10'), 'foo/b\n22\nfoo/c\n3\n', 'get --rev=10 after deletes')
    },
  },
  {
    title: 'txn from stdin: compares on value, version, create, mod; success and failure branches',
    async run(s) {
      s.check(await s.ok('put', 't/k', 'v'), 'OK\n', 'put t/k') // rev 13
      const all =
        'value("t/k") = "v"\nversion("t/k") = "1"\ncreate("t/k") = "13"\nmod("t/k") = "13"\n\nput t/k v2\nget t/k\n\nput t/k never\n\n'
      s.check((await s.run(['txn'], { input: all })).out, 'SUCCESS\n\nOK\n\nt/k\nv2\n', 'txn: four compares hold') // rev 14
      const fails = 'value("t/k") = "zz"\n\nput t/k never\n\nput t/f 1\nget t/k\n\n'
      s.check((await s.run(['txn'], { input: fails })).out, 'FAILURE\n\nOK\n\nt/k\nv2\n', 'txn: else branch') // rev 15
      const ordered = 'mod("t/k") > "13"\nversion("t/k") < "3"\ncreate("t/k") != "0"\nvalue("t/k") > "v"\n\ndel t/f\n\n\n'
      s.check((await s.run(['txn'], { input: ordered })).out, 'SUCCESS\n\n1\n', 'txn: > < != compares') // rev 16
      // A missing key: its mod/create/version are 0; a value compare on it is false whatever the operator.
      const absent = await s.run(['txn', '-w', 'json'], { input: 'value("t/missing") != "x"\n\nput t/x 1\n\nget t/k --keys-only\n\n' })
      s.check(
        absent.out,
        [
          {
            header: header(16),
            responses: [
              {
                Response: {
                  ResponseRange: {
                    header: { revision: 16 },
                    kvs: [{ key: b64('t/k'), create_revision: 13, mod_revision: 14, version: 2 }],
                    count: 1,
                  },
                },
              },
            ],
          },
        ],
        'txn -w json: value compare on a missing key fails',
      )
      const create = await s.run(['txn', '-w', 'json'], { input: 'mod("t/new") = "0"\n\nput t/new 1\n\n\n' }) // rev 17
      s.check(
        create.out,
        [{ header: header(17), succeeded: true, responses: [{ Response: { ResponsePut: { header: { revision: 17 } } } }] }],
        'txn -w json: create',
      )
      const readOnly = await s.run(['txn', '-w', 'json'], { input: 'version("t/new") = "1"\n\nget t/nothing\n\n\n' })
      s.check(
        readOnly.out,
        [{ header: header(17), succeeded: true, responses: [{ Response: { ResponseRange: { header: { revision: 17 } } } }] }],
        'txn -w json: read-only',
      )
      const dup = await s.run(['txn'], { input: '\nput t/d 1\nput t/d 2\n\n\n' })
      s.check(dup.error, 'Error: etcdserver: duplicate key given in txn request', 'txn with a duplicate key')
      s.check(await revision(s, 't/'), 17, 'revision after the txns')
    },
  },
  {
    title: 'watch: history from --rev with --prev-kv, then live events',
    async run(s) {
      s.check(await s.ok('put', 'w/a', '1'), 'OK\n', 'put w/a 1') // rev 18
      s.check(await s.ok('put', 'w/a', '2'), 'OK\n', 'put w/a 2') // rev 19
      s.check(await s.ok('del', 'w/a'), '1\n', 'del w/a') // rev 20
      const w = s.spawn('watch', '--prefix', 'w/', '--rev=18', '--prev-kv')
      try {
        // With --prev-kv etcdctl prints the previous kv before the new one.
        await linesOf(s, w, 3 + 5 + 5, 'watch history')
        await sleep(200)
        s.check(await s.ok('put', 'w/b', '3'), 'OK\n', 'put w/b 3') // rev 21, live
        s.check(await s.ok('put', 'x/outside', '4'), 'OK\n', 'put outside the watch') // rev 22
        s.check(await s.ok('put', 'w/b', '5'), 'OK\n', 'put w/b 5') // rev 23, live
        const lines = await linesOf(s, w, 13 + 3 + 5, 'watch live events')
        s.check(
          lines,
          [
            'PUT',
            'w/a',
            '1',
            'PUT',
            'w/a',
            '1',
            'w/a',
            '2',
            'DELETE',
            'w/a',
            '2',
            'w/a',
            '',
            'PUT',
            'w/b',
            '3',
            'PUT',
            'w/b',
            '3',
            'w/b',
            '5',
          ],
          'watch --prefix w/ --rev=18 --prev-kv',
        )
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
        const deadline = Date.now() + 5000
        while (events.length < 2 && Date.now() < deadline) {
          events.length = 0
          for (const line of w.lines()) events.push(...(JSON.parse(line) as { Events: unknown[] }).Events)
          await sleep(20)
        }
        // Responses may group events differently; the events themselves must match.
        s.check(
          events,
          [
            { kv: { key: b64('w/b'), create_revision: 21, mod_revision: 21, version: 1, value: b64('3') } },
            {
              kv: { key: b64('w/b'), create_revision: 21, mod_revision: 23, version: 2, value: b64('5') },
              prev_kv: { key: b64('w/b'), create_revision: 21, mod_revision: 21, version: 1, value: b64('3') },
            },
          ],
          'watch -w json events',
        )
        s.record(
          'watch w/b --rev=19 --prev-kv -w json (events)',
          events.map((e) => JSON.stringify(e)),
        )
      } finally {
        await w.stop('SIGTERM')
      }
    },
  },
  {
    title: 'compaction: get and watch below the compact revision fail the same way; --physical',
    async run(s) {
      s.check(await revision(s), 23, 'revision before compaction')
      s.check(await s.ok('compaction', '20'), 'compacted revision 20\n', 'compaction 20')
      const old = await s.run(['get', 'w/a', '--rev=19'])
      s.check([old.code, old.error], [1, COMPACTED], 'get below the compact revision')
      s.check(await s.ok('get', '--prefix', 'foo/', '--rev=20'), '', 'get at the compact revision') // readable
      s.check(await s.ok('get', '--prefix', 't/', '--rev=20', '--keys-only'), 't/k\n\nt/new\n\n', 'get t/ at the compact revision')
      const w = s.spawn('watch', '--prefix', 'w/', '--rev=19')
      const code = await Promise.race([w.exited, sleep(5000).then(() => 'timeout')])
      await w.stop('SIGKILL')
      // etcdctl prints both lines to stderr and exits non-zero.
      const said = w
        .stderr()
        .split('\n')
        .filter((l) => l !== '' && !l.startsWith('{'))
      s.check(
        [said, code === 0 || code === 'timeout' ? code : 'failed'],
        [
          ['watch was canceled (etcdserver: mvcc: required revision has been compacted)', 'Error: watch is canceled by the server'],
          'failed',
        ],
        'watch below the compact revision',
      )
      s.record('watch --prefix w/ --rev=19 (stderr)', said, typeof code === 'number' ? code : null)
      s.check((await s.run(['compaction', '19'])).error, COMPACTED, 'compaction below the compact revision')
      s.check((await s.run(['compaction', '1000'])).error, FUTURE, 'compaction at a future revision')
      s.check(await s.ok('compaction', '--physical', '23'), 'compacted revision 23\n', 'compaction --physical')
      s.check((await s.run(['get', 'w/b', '--rev=22'])).error, COMPACTED, 'get below the new compact revision')
      s.check(await s.ok('get', 'w/b', '--rev=23'), 'w/b\n5\n', 'get at the new compact revision')
      s.check(await revision(s), 23, 'compaction is not a write')
    },
  },
]
