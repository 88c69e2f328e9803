/**
 * The `kvlog` command line end to end: every client command spawned as `node bin/kvlog ...` against a
 * real server (endpoint from KVLOG_ENDPOINT or --endpoint), in both output forms, plus exit codes for
 * usage errors (2), failures (1) and compaction (3), and --help on every command.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { KvlogClient } from '../../clients/index.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { jsonLines, kvlog, watchProcess, type Run } from './run-cli.js'
import { closedPort } from './tcp-proxy.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('kvlog CLI (real server)', function () {
  this.timeout(40_000)
  let server: ServerProcess
  let ep: string
  let kv: KvlogClient
  let tmp: string
  const run = (...args: string[]) => kvlog(args, { endpoint: ep })

  before(async () => {
    server = await startServerProcess()
    ep = server.http
    kv = new KvlogClient({ endpoint: ep })
    tmp = await mkdtemp(join(tmpdir(), 'kvlog-cli-'))
  })

  after(async () => {
    await server?.cleanup()
    if (tmp) await rm(tmp, { recursive: true, force: true })
  })

  it('put, in both forms, with --prev-kv', async () => {
    const a = await run('put', '/put/a', 'one')
    expect(a.code).to.equal(0)
    const rev = (await kv.get('/put/a'))!.modRevision
    expect(a.stdout).to.contain(`revision ${rev}`)

    const b = await run('put', '/put/a', 'two', '--prev-kv', '-o', 'json')
    expect(b.code).to.equal(0)
    const j = JSON.parse(b.stdout) as { revision: number; prevKv: Record<string, unknown> }
    expect(j.revision).to.equal(rev + 1)
    expect(j.prevKv).to.include({ key: '/put/a', value: 'one', modRevision: rev, version: 1 })

    const c = await run('put', '/put/a', 'three', '--prev-kv')
    expect(c.code).to.equal(0)
    expect(c.stdout)
      .to.contain(`revision ${rev + 2}`)
      .and.contain('two')
    const d = await run('put', '/put/b', 'x', '--output=json')
    expect(JSON.parse(d.stdout)).to.not.have.property('prevKv')
    expect(String((await kv.get('/put/a'))!.value)).to.equal('three')
  })

  it('get: one key, --prefix, --rev, --limit, --keys-only, --count-only, in both forms', async () => {
    const r1 = (await kv.put('/get/a', 'va1')).revision
    await kv.put('/get/a', 'va2')
    await kv.put('/get/b', 'vb')
    await kv.put('/get/c', 'vc')

    const [one, prefix, atRev, limit, keysOnly, countOnly, tPrefix, tKeys, tCount, tLimit] = await Promise.all([
      run('get', '/get/a', '-o', 'json'),
      run('get', '/get/', '--prefix', '-o', 'json'),
      run('get', '/get/a', '--rev', String(r1), '-o', 'json'),
      run('get', '/get/', '--prefix', '--limit', '2', '-o', 'json'),
      run('get', '/get/', '--prefix', '--keys-only', '-o', 'json'),
      run('get', '/get/', '--prefix', '--count-only', '-o', 'json'),
      run('get', '/get/', '--prefix'),
      run('get', '/get/', '--prefix', '--keys-only'),
      run('get', '/get/', '--prefix', '--count-only'),
      run('get', '/get/', '--prefix', '--limit', '1'),
    ])
    for (const r of [one, prefix, atRev, limit, keysOnly, countOnly, tPrefix, tKeys, tCount, tLimit]) expect(r.code, r.stderr).to.equal(0)
    type Out = {
      revision: number
      count: number
      more: boolean
      kvs: Array<{ key: string; value: string; version: number; modRevision: number }>
    }
    const j = (r: Run) => JSON.parse(r.stdout) as Out
    expect(j(one).kvs.map((x) => [x.key, x.value, x.version])).to.deep.equal([['/get/a', 'va2', 2]])
    expect(j(prefix).kvs.map((x) => x.key)).to.deep.equal(['/get/a', '/get/b', '/get/c'])
    expect(j(prefix).count).to.equal(3)
    expect(j(atRev).kvs.map((x) => [x.value, x.modRevision])).to.deep.equal([['va1', r1]])
    expect(j(atRev).revision).to.equal(r1)
    expect(j(limit).kvs.map((x) => x.key)).to.deep.equal(['/get/a', '/get/b'])
    expect(j(limit)).to.include({ more: true, count: 3 })
    expect(j(keysOnly).kvs.map((x) => x.key)).to.deep.equal(['/get/a', '/get/b', '/get/c'])
    expect(j(keysOnly).kvs.every((x) => !x.value)).to.equal(true)
    expect(j(countOnly).count).to.equal(3)
    expect(j(countOnly).kvs).to.deep.equal([])

    const rows = tPrefix.stdout.trim().split('\n')
    expect(rows).to.have.length(4) // header + 3
    expect(rows[1].split(/\s+/).slice(0, 2)).to.deep.equal(['/get/a', 'va2'])
    expect(tKeys.stdout).to.contain('/get/b').and.not.contain('vb')
    expect(tCount.stdout.trim()).to.equal('3')
    expect(tLimit.stdout).to.contain('/get/a').and.not.contain('/get/b')
    expect(tLimit.stdout).to.contain('2 more')
  })

  it('del: one key, --prefix, --prev-kv, in both forms', async () => {
    for (const k of ['a', 'b', 'c', 'd']) await kv.put(`/del/${k}`, `v${k}`)
    const one = await run('del', '/del/a')
    expect(one.code).to.equal(0)
    expect(one.stdout).to.match(/deleted 1\b/)
    const prev = await run('del', '/del/b', '--prev-kv', '-o', 'json')
    expect(prev.code).to.equal(0)
    const pj = JSON.parse(prev.stdout) as { deleted: number; prevKvs: Array<{ key: string; value: string }> }
    expect(pj.deleted).to.equal(1)
    expect(pj.prevKvs.map((x) => [x.key, x.value])).to.deep.equal([['/del/b', 'vb']])
    const rest = await run('del', '/del/', '--prefix', '--prev-kv', '-o', 'json')
    const rj = JSON.parse(rest.stdout) as { deleted: number; revision: number; prevKvs: Array<{ key: string }> }
    expect(rj.deleted).to.equal(2)
    expect(rj.prevKvs.map((x) => x.key)).to.deep.equal(['/del/c', '/del/d'])
    const none = await run('del', '/del/', '--prefix')
    expect(none.code).to.equal(0)
    expect(none.stdout).to.match(/deleted 0\b/)
    expect((await kv.range('/del/', { prefix: true })).count).to.equal(0)
    expect((await kv.status()).revision).to.equal(rj.revision)
  })

  it('txn: JSON from a file and from stdin, in both forms', async () => {
    const { revision } = await kv.put('/txn/a', '1')
    const file = join(tmp, 'txn.json')
    await writeFile(
      file,
      JSON.stringify({
        compare: [{ key: '/txn/a', target: 'MOD', result: 'EQUAL', value: revision }],
        success: [
          { type: 'put', key: '/txn/a', value: '2' },
          { type: 'put', key: '/txn/b', value: 'b' },
        ],
        failure: [{ type: 'range', key: '/txn/a' }],
      }),
    )
    const fromFile = await run('txn', file, '-o', 'json')
    expect(fromFile.code, fromFile.stderr).to.equal(0)
    const fj = JSON.parse(fromFile.stdout) as { succeeded: boolean; revision: number; results: Array<{ type: string }> }
    expect(fj.succeeded).to.equal(true)
    expect(fj.revision).to.equal(revision + 1)
    expect(fj.results.map((x) => x.type)).to.deep.equal(['put', 'put'])
    expect((await kv.get('/txn/b'))?.modRevision).to.equal(revision + 1)

    // The same file again: the compare fails now; the failure branch reads.
    const again = await run('txn', file)
    expect(again.code).to.equal(0)
    expect(again.stdout).to.contain('FAILURE')

    const stdin = JSON.stringify({
      compare: [{ key: '/txn/a', target: 'VALUE', result: 'EQUAL', value: '2' }],
      success: [{ type: 'delete', key: '/txn/', prefix: true }],
      failure: [],
    })
    const viaStdin = await kvlog(['txn', '-o', 'json'], { endpoint: ep, input: stdin })
    expect(viaStdin.code, viaStdin.stderr).to.equal(0)
    const sj = JSON.parse(viaStdin.stdout) as { succeeded: boolean; results: Array<{ deleted: number }> }
    expect(sj.succeeded).to.equal(true)
    expect(sj.results[0].deleted).to.equal(2)
    const dash = await kvlog(['txn', '-'], {
      endpoint: ep,
      input: JSON.stringify({ compare: [], success: [{ type: 'put', key: '/txn/c', value: 'c' }], failure: [] }),
    })
    expect(dash.code).to.equal(0)
    expect(dash.stdout).to.contain('SUCCESS')
    expect(String((await kv.get('/txn/c'))?.value)).to.equal('c')

    const bad = await kvlog(['txn'], { endpoint: ep, input: '{not json' })
    expect(bad.code).to.be.oneOf([1, 2])
    const invalid = await kvlog(['txn'], {
      endpoint: ep,
      input: JSON.stringify({ compare: [], success: [{ type: 'put', key: '', value: 'x' }], failure: [] }),
    })
    expect(invalid.code).to.equal(1)
    expect(invalid.stderr).to.contain('EMPTY_KEY')
  })

  it('watch -o json: every field, --prev-kv, deletes, non-UTF-8 keys and values as base64; stopped by a signal', async () => {
    const start = ((await kv.status()).revision as number) + 1
    const w = watchProcess(['/wj/', '--prefix', '--rev', String(start), '--prev-kv', '-o', 'json'], ep)
    const binKey = Buffer.from([0x2f, 0x77, 0x6a, 0x2f, 0xff, 0xfe])
    const binValue = Buffer.from([0x00, 0x80, 0xc3, 0x28])
    const r1 = (await kv.put('/wj/a', '{"n":1}')).revision
    const r2 = (await kv.put('/wj/a', '{"n":2}')).revision
    const r3 = (await kv.put(binKey, binValue)).revision
    const r4 = (await kv.delete('/wj/a')).revision
    await kv.put('/other', 'not watched')
    const lines = (await w.waitLines(4)).map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(await w.stop('SIGTERM')).to.equal(0)
    expect(lines).to.have.length(4)
    expect(lines.map((l) => l.revision)).to.deep.equal([r1, r2, r3, r4])
    expect(lines[0]).to.include({
      type: 'PUT',
      key: '/wj/a',
      value: '{"n":1}',
      revision: r1,
      createRevision: r1,
      modRevision: r1,
      version: 1,
    })
    expect(lines[0]).to.not.have.property('prevValue')
    expect(lines[1]).to.include({
      type: 'PUT',
      key: '/wj/a',
      value: '{"n":2}',
      createRevision: r1,
      modRevision: r2,
      version: 2,
      prevValue: '{"n":1}',
    })
    expect(lines[2]).to.include({ type: 'PUT', keyBase64: binKey.toString('base64'), valueBase64: binValue.toString('base64'), version: 1 })
    expect(lines[2]).to.not.have.property('key')
    expect(lines[2]).to.not.have.property('value')
    expect(lines[3]).to.include({ type: 'DELETE', key: '/wj/a', revision: r4, modRevision: r4, version: 0, prevValue: '{"n":2}' })
    for (const l of lines) expect(Number.isFinite(Date.parse(l.time as string)), String(l.time)).to.equal(true)
  })

  it('watch in table form, and without --prev-kv no prevValue', async () => {
    const start = ((await kv.status()).revision as number) + 1
    const table = watchProcess(['/wt/', '--prefix', '--rev', String(start)], ep)
    const json = watchProcess(['/wt/', '--prefix', '--rev', String(start), '-o', 'json'], ep)
    const r1 = (await kv.put('/wt/x', 'hello')).revision
    const r2 = (await kv.put('/wt/x', 'again')).revision
    const rows = await table.waitLines(2)
    const jl = (await json.waitLines(2)).map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(await table.stop('SIGINT')).to.equal(0)
    expect(await json.stop()).to.equal(0)
    expect(rows.map((r) => r.split('\t'))).to.deep.equal([
      [String(r1), 'PUT', '/wt/x', 'hello'],
      [String(r2), 'PUT', '/wt/x', 'again'],
    ])
    expect(jl[1]).to.not.have.property('prevValue')
  })

  it('history: --from/--to as revisions and as ISO times, -o json lines, JSON diffs in table form', async () => {
    const r1 = (await kv.put('/hi/dep', JSON.stringify({ spec: { replicas: 2, image: 'a' } }))).revision
    await sleep(40)
    const t1 = new Date().toISOString()
    await sleep(40)
    const r2 = (await kv.put('/hi/dep', JSON.stringify({ spec: { replicas: 3, image: 'a' } }))).revision
    const r3 = (await kv.put('/hi/txt', 'plain')).revision
    await sleep(40)
    const t2 = new Date().toISOString()
    await sleep(40)
    const r4 = (await kv.delete('/hi/dep')).revision

    const [all, byRev, byTime, table] = await Promise.all([
      run('history', '/hi/', '--prefix', '-o', 'json'),
      run('history', '/hi/', '--prefix', '--from', String(r2), '--to', String(r3), '-o', 'json'),
      run('history', '/hi/', '--prefix', '--from', t1, '--to', t2, '-o', 'json'),
      run('history', '/hi/dep'),
    ])
    for (const r of [all, byRev, byTime, table]) expect(r.code, r.stderr).to.equal(0)
    const allJ = jsonLines(all.stdout)
    expect(allJ.map((e) => [e.revision, e.type, e.key])).to.deep.equal([
      [r1, 'PUT', '/hi/dep'],
      [r2, 'PUT', '/hi/dep'],
      [r3, 'PUT', '/hi/txt'],
      [r4, 'DELETE', '/hi/dep'],
    ])
    expect(allJ[1].prevValue).to.equal(JSON.stringify({ spec: { replicas: 2, image: 'a' } }))
    for (const e of allJ) expect(Number.isFinite(Date.parse(e.time as string))).to.equal(true)
    // Who changed what: the native door, anonymous (auth is off), with the client's user agent (Node's fetch).
    for (const e of allJ) expect(e.author).to.deep.equal({ door: 'http', agent: 'node' })
    // The history's times are commit times, the same the API gives.
    const api = await kv.history('/hi/', { prefix: true })
    expect(allJ.map((e) => e.time)).to.deep.equal(api.events.map((e) => e.time))
    expect(jsonLines(byRev.stdout).map((e) => e.revision)).to.deep.equal([r2, r3])
    expect(jsonLines(byTime.stdout).map((e) => e.revision)).to.deep.equal([r2, r3])

    const rows = table.stdout.trim().split('\n')
    expect(rows).to.have.length(4) // header + 3 events of /hi/dep
    expect(rows[2]).to.contain(String(r2)).and.contain('.spec.replicas: 2 → 3').and.not.contain('image')
    expect(rows[3]).to.contain('DELETE')
    expect(rows[0]).to.contain('WHO')
    expect(rows[1]).to.contain('anonymous@http')

    const badTime = await run('history', '/hi/', '--prefix', '--from', 'yesterday-ish')
    expect(badTime.code).to.equal(2)
  })

  it('diff --from/--to: added, removed and modified keys, in both forms', async () => {
    await kv.put('/df/keep', 'same')
    await kv.put('/df/mod', JSON.stringify({ a: 1, b: 'x' }))
    const from = (await kv.put('/df/gone', 'bye')).revision
    await kv.put('/df/mod', JSON.stringify({ a: 2, b: 'x' }))
    await kv.delete('/df/gone')
    const to = (await kv.put('/df/new', 'hi')).revision
    await kv.put('/df/later', 'not in the window')

    const [json, table, all] = await Promise.all([
      run('diff', '--from', String(from), '--to', String(to), '/df/', '--prefix', '-o', 'json'),
      run('diff', '--from', String(from), '--to', String(to), '/df/', '--prefix'),
      run('diff', '--from', String(from), '--to', String(to), '-o', 'json'),
    ])
    for (const r of [json, table, all]) expect(r.code, r.stderr).to.equal(0)
    const changes = jsonLines(json.stdout)
    expect(changes.map((c) => [c.change, c.key])).to.deep.equal([
      ['removed', '/df/gone'],
      ['modified', '/df/mod'],
      ['added', '/df/new'],
    ])
    expect(changes[1].before).to.deep.include({ value: JSON.stringify({ a: 1, b: 'x' }) })
    expect(changes[1].after).to.deep.include({ value: JSON.stringify({ a: 2, b: 'x' }) })
    expect(jsonLines(all.stdout).map((c) => c.key)).to.deep.equal(['/df/gone', '/df/mod', '/df/new'])
    const rows = table.stdout.trim().split('\n')
    expect(rows).to.have.length(4)
    expect(rows.find((r) => r.includes('/df/mod')))
      .to.contain('modified')
      .and.contain('.a: 1 → 2')
    expect(rows.find((r) => r.includes('/df/new'))).to.contain('added')
    const missing = await run('diff', '--to', String(to))
    expect(missing.code).to.equal(2)
  })

  it('diff -o json gives bytes that are not UTF-8 as keyBase64 / valueBase64 (as every -o json output)', async () => {
    const key = Buffer.from([0x2f, 0x64, 0x62, 0x2f, 0xff])
    const from = (await kv.put(key, Buffer.from([0x01, 0xfe]))).revision
    const to = (await kv.put(key, Buffer.from([0x02, 0xfe]))).revision
    const r = await run('diff', '--from', String(from), '--to', String(to), '/db/', '--prefix', '-o', 'json')
    expect(r.code).to.equal(0)
    const [c] = jsonLines(r.stdout)
    expect(c).to.include({ change: 'modified', keyBase64: key.toString('base64') })
    expect(c.before).to.deep.equal({ valueBase64: Buffer.from([0x01, 0xfe]).toString('base64'), modRevision: from })
    expect(c.after).to.deep.equal({ valueBase64: Buffer.from([0x02, 0xfe]).toString('base64'), modRevision: to })
  })

  it('status and cursor list/commit/delete, in both forms', async () => {
    const rev = (await kv.put('/st/a', '1')).revision
    const [sj, st] = await Promise.all([run('status', '-o', 'json'), run('status')])
    expect(sj.code).to.equal(0)
    const s = JSON.parse(sj.stdout) as { revision: number; compactRevision: number; segments: unknown[] }
    expect(s.revision).to.equal(rev)
    expect(s.segments.length).to.be.greaterThan(0)
    expect(st.code).to.equal(0)
    expect(st.stdout).to.match(new RegExp(`^revision\\s+${rev}$`, 'm'))

    const c1 = await run('cursor', 'commit', 'ctl-a', String(rev - 1), '-o', 'json')
    expect(c1.code, c1.stderr).to.equal(0)
    expect(JSON.parse(c1.stdout)).to.include({ name: 'ctl-a', revision: rev - 1, lag: 1, expired: false })
    const c2 = await run('cursor', 'commit', 'ctl-b', String(rev))
    expect(c2.code).to.equal(0)
    expect(c2.stdout).to.contain('ctl-b').and.contain(String(rev))
    const [lj, lt] = await Promise.all([run('cursor', 'list', '-o', 'json'), run('cursor', 'list')])
    expect((JSON.parse(lj.stdout) as Array<{ name: string; revision: number }>).map((x) => [x.name, x.revision])).to.deep.equal([
      ['ctl-a', rev - 1],
      ['ctl-b', rev],
    ])
    expect(lt.stdout.trim().split('\n')).to.have.length(3)
    const d = await run('cursor', 'delete', 'ctl-a', '-o', 'json')
    expect(d.code).to.equal(0)
    expect(JSON.parse(d.stdout)).to.deep.equal({ deleted: 'ctl-a' })
    const d2 = await run('cursor', 'delete', 'ctl-b')
    expect(d2.code).to.equal(0)
    expect((await kv.cursors()).map((x) => x.name)).to.deep.equal([])
    const [future, badRev, badVerb] = await Promise.all([
      run('cursor', 'commit', 'ctl-c', String(rev + 100)),
      run('cursor', 'commit', 'ctl-c', 'abc'),
      run('cursor', 'frob'),
    ])
    expect(future.code).to.equal(1)
    expect(future.stderr).to.contain('FUTURE_REVISION')
    expect(badRev.code).to.equal(2)
    expect(badVerb.code).to.equal(2)
  })

  describe('compaction (own server)', () => {
    let s2: ServerProcess
    let k2: KvlogClient
    before(async () => {
      s2 = await startServerProcess()
      k2 = new KvlogClient({ endpoint: s2.http })
    })
    after(async () => {
      await s2?.cleanup()
    })

    it('compact REV and --keep N in both forms; below the floor: watch, get and history exit 3', async () => {
      let rev = 0
      for (let i = 0; i < 12; i++) rev = (await k2.put('/cp/a', String(i))).revision
      const a = await kvlog(['compact', '5'], { endpoint: s2.http })
      expect(a.code, a.stderr).to.equal(0)
      expect(a.stdout).to.contain('revision 5')
      expect((await k2.status()).compactRevision).to.equal(5)
      const b = await kvlog(['compact', '--keep', '3', '-o', 'json', '--endpoint', s2.http])
      expect(b.code, b.stderr).to.equal(0)
      expect((JSON.parse(b.stdout) as { compactRevision: number }).compactRevision).to.equal(rev - 3)
      expect((await k2.status()).compactRevision).to.equal(rev - 3)

      const [watch, get, history, again] = await Promise.all([
        kvlog(['watch', '/cp/', '--prefix', '--rev', '2'], { endpoint: s2.http }),
        kvlog(['get', '/cp/a', '--rev', '3'], { endpoint: s2.http }),
        kvlog(['history', '/cp/a', '--from', '2'], { endpoint: s2.http }),
        kvlog(['compact', '4'], { endpoint: s2.http }),
      ])
      expect(watch.code).to.equal(3)
      expect(watch.stdout).to.equal('')
      expect(get.code).to.equal(3)
      expect(history.code).to.equal(3)
      expect(again.code).to.equal(3)
      const [future, both, neither, notRev] = await Promise.all([
        kvlog(['compact', String(rev + 10)], { endpoint: s2.http }),
        kvlog(['compact', '9', '--keep', '2'], { endpoint: s2.http }),
        kvlog(['compact'], { endpoint: s2.http }),
        kvlog(['compact', 'abc'], { endpoint: s2.http }),
      ])
      expect(future.code).to.equal(1)
      expect(future.stderr).to.contain('FUTURE_REVISION')
      expect([both.code, neither.code, notRev.code]).to.deep.equal([2, 2, 2])
    })
  })

  it('bad input: usage errors exit 2, failures exit 1', async () => {
    const dead = `http://127.0.0.1:${await closedPort()}`
    const [
      unknownCmd,
      unknownFlag,
      missing,
      missingValue,
      badRev,
      badRevWatch,
      badOut,
      extra,
      none,
      unreachableEnv,
      unreachableFlag,
      emptyKey,
    ] = await Promise.all([
      run('frobnicate'),
      run('get', '/a', '--bogus'),
      run('put', '/a'),
      run('get', '/a', '--rev'),
      run('get', '/a', '--rev', 'abc'),
      run('watch', '/a', '--rev', '-1'),
      run('get', '/a', '-o', 'yaml'),
      run('status', 'extra'),
      kvlog([]),
      kvlog(['get', '/a'], { endpoint: dead }),
      kvlog(['put', '/a', 'b', '--endpoint', dead], { endpoint: ep }),
      run('put', '', 'x'),
    ])
    expect({
      unknownCmd: unknownCmd.code,
      unknownFlag: unknownFlag.code,
      missing: missing.code,
      missingValue: missingValue.code,
      badRev: badRev.code,
      badRevWatch: badRevWatch.code,
      badOut: badOut.code,
      extra: extra.code,
      none: none.code,
    }).to.deep.equal({
      unknownCmd: 2,
      unknownFlag: 2,
      missing: 2,
      missingValue: 2,
      badRev: 2,
      badRevWatch: 2,
      badOut: 2,
      extra: 2,
      none: 2,
    })
    expect(unreachableEnv.code).to.equal(1)
    expect(unreachableFlag.code).to.equal(1)
    expect(emptyKey.code).to.equal(1)
    expect(emptyKey.stderr).to.contain('EMPTY_KEY')
    for (const r of [unknownCmd, unknownFlag, missing, badRev, unreachableEnv, emptyKey]) expect(r.stdout).to.equal('')
  })

  it('--help on every command exits 0 and prints its usage', async () => {
    const commands = [
      'put',
      'get',
      'del',
      'txn',
      'watch',
      'history',
      'diff',
      'compact',
      'status',
      'cursor',
      'lease',
      'snapshot',
      'serve',
      'import',
    ]
    const runs = await Promise.all([...commands.map((c) => kvlog([c, '--help'])), kvlog(['--help']), kvlog(['get', '-h'])])
    commands.forEach((c, i) => {
      expect(runs[i].code, `${c} --help`).to.equal(0)
      expect(runs[i].stdout, `${c} --help`).to.contain(`kvlog ${c}`)
    })
    expect(runs[commands.length].code).to.equal(0)
    for (const c of commands) expect(runs[commands.length].stdout).to.contain(c)
    expect(runs[commands.length + 1].code).to.equal(0)
  })
})
