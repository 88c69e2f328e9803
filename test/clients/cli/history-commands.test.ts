/**
 * dump, diff and revert end to end against a real `kvlog serve`: a store with compacted history, a
 * leased key and a key and value that are not UTF-8; states at a revision and at a time; revert as a
 * dry run and for real (one new revision, ordinary events); and the bad inputs: a future revision, a
 * compacted revision, a time before the floor, a prefix with no keys.
 */
import { expect } from 'chai'
import { parse as parseYaml } from 'yaml'
import { KvlogClient } from '../../../clients/index.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { jsonLines, kvlog, kvlogInProcess } from '../run-cli.js'

type DumpKv = { key?: string; keyBase64?: string; value?: string; valueBase64?: string; modRevision: number; lease?: string }
type Dump = { revision: number; prefix?: string; count: number; kvs: DumpKv[] }

const BIN_KEY = Buffer.from([0x2f, 0x68, 0x2f, 0xff, 0x00, 0x01]) // "/h/" then bytes that are not UTF-8
const BIN_VALUE = Buffer.from([0xfe, 0xff, 0x00])
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('kvlog dump, diff, revert (real server)', function () {
  this.timeout(60_000)
  let server: ServerProcess
  let ep: string
  let kv: KvlogClient
  const run = (...args: string[]) => kvlog(args, { endpoint: ep })
  const quick = (...args: string[]) => kvlogInProcess(args, ep)
  // Revisions of the scenario, set in before().
  let floor = 0
  const r = { a1: 0, bin: 0, leased: 0, a2: 0, bDeleted: 0, c: 0 }
  let lease = ''
  let timeAfterA2 = ''

  before(async () => {
    server = await startServerProcess()
    ep = server.http
    kv = new KvlogClient({ endpoint: ep })
    await kv.put('/old/x', '1')
    await kv.put('/old/x', '2')
    floor = (await kv.put('/h/b', 'b1')).revision
    await kv.compact(floor)
    r.a1 = (await kv.put('/h/a', '{"x":1,"keep":true}')).revision
    r.bin = (await kv.put(BIN_KEY, BIN_VALUE)).revision
    lease = String((await kv.leaseGrant(600)).id)
    r.leased = (await kv.put('/h/leased', 'L', { lease })).revision
    r.a2 = (await kv.put('/h/a', '{"x":2,"keep":true}')).revision
    await sleep(30)
    timeAfterA2 = new Date().toISOString()
    await sleep(30)
    r.bDeleted = (await kv.delete('/h/b')).revision
    r.c = (await kv.put('/h/c', 'c')).revision
  })

  after(async () => {
    await server?.cleanup()
  })

  it('dump at a revision: json, yaml and ndjson agree; bytes that are not UTF-8 as base64; leases kept', async () => {
    const [json, yaml, ndjson, table] = await Promise.all([
      run('dump', '--rev', String(r.a2), '--prefix', '/h/', '-o', 'json'),
      run('dump', '--rev', String(r.a2), '--prefix', '/h/', '-o', 'yaml'),
      run('dump', '--rev', String(r.a2), '--prefix', '/h/', '-o', 'ndjson'),
      run('dump', '--rev', String(r.a2), '--prefix', '/h/'),
    ])
    for (const x of [json, yaml, ndjson, table]) expect(x.code, x.stderr).to.equal(0)
    const doc = JSON.parse(json.stdout) as Dump
    expect(doc).to.include({ revision: r.a2, prefix: '/h/', count: 4 })
    expect(doc.kvs.map((k) => k.key ?? `b64:${k.keyBase64}`)).to.deep.equal([
      '/h/a',
      '/h/b',
      '/h/leased',
      `b64:${BIN_KEY.toString('base64')}`,
    ])
    expect(doc.kvs[0]).to.include({ value: '{"x":2,"keep":true}', modRevision: r.a2 })
    expect(doc.kvs[2]).to.include({ value: 'L', lease })
    expect(doc.kvs[3]).to.include({ valueBase64: BIN_VALUE.toString('base64') })
    // yaml prints a value that is JSON as YAML; the others as in json.
    const asYaml = { ...doc, kvs: doc.kvs.map((k, i) => (i === 0 ? { ...k, value: { x: 2, keep: true } } : k)) }
    expect(parseYaml(yaml.stdout)).to.deep.equal(asYaml)
    expect(yaml.stdout).to.match(/^ {4}value:\n {6}x: 2\n {6}keep: true$/m)
    expect(jsonLines(ndjson.stdout)).to.deep.equal(doc.kvs)
    expect(table.stdout)
      .to.contain('/h/leased')
      .and.contain(`base64:${BIN_VALUE.toString('base64')}`)
  })

  it('dump --at TIME is the state at the last revision committed at or before that time', async () => {
    const [at, rev] = await Promise.all([
      run('dump', '--at', timeAfterA2, '--prefix', '/h/', '-o', 'json'),
      run('dump', '--rev', String(r.a2), '--prefix', '/h/', '-o', 'json'),
    ])
    expect(at.code, at.stderr).to.equal(0)
    expect(JSON.parse(at.stdout)).to.deep.equal(JSON.parse(rev.stdout))
    const whole = await run('dump', '--rev', String(r.c), '-o', 'ndjson')
    expect(jsonLines(whole.stdout).map((k) => k.key ?? 'bin')).to.deep.equal(['/h/a', '/h/c', '/h/leased', 'bin', '/old/x'])
  })

  it('dump: bad inputs get clear errors and exit codes; a prefix with no keys is an empty dump', async () => {
    const head = (await kv.status()).revision as number
    const [future, compacted, beforeFloor, none] = await Promise.all([
      run('dump', '--rev', String(head + 100)),
      run('dump', '--rev', String(floor - 1)),
      run('dump', '--at', '2001-01-01T00:00:00Z'),
      run('dump', '--rev', String(r.c), '--prefix', '/nothing/here/', '-o', 'json'),
    ])
    // In-process runs swap process.stdout: one at a time.
    const both = await quick('dump', '--rev', '3', '--at', timeAfterA2)
    const neither = await quick('dump')
    const badTime = await quick('dump', '--at', 'yesterday-ish')
    const badOutput = await quick('dump', '--rev', '3', '-o', 'xml')
    expect(future.code).to.equal(1)
    expect(future.stderr).to.contain('FUTURE_REVISION')
    expect(compacted.code).to.equal(3)
    expect(compacted.stderr).to.contain('COMPACTED').and.contain(String(floor))
    expect(beforeFloor.code).to.equal(3)
    expect(beforeFloor.stderr).to.contain('COMPACTED')
    expect(none.code).to.equal(0)
    expect(JSON.parse(none.stdout)).to.deep.include({ count: 0, kvs: [] })
    expect(none.stderr).to.contain('no keys under "/nothing/here/"')
    for (const x of [both, neither, badTime, badOutput]) expect(x.code, x.stderr).to.equal(2)
  })

  it('diff --from REV --to TIME: added, removed and modified keys with value diffs', async () => {
    const [json, table, toNow] = await Promise.all([
      run('diff', '--from', String(r.a1), '--to', timeAfterA2, '/h/', '--prefix', '-o', 'json'),
      run('diff', '--from', String(r.a1), '--to', timeAfterA2, '/h/', '--prefix'),
      run('diff', '--from', timeAfterA2, '--to', String(r.c), '/h/', '--prefix', '-o', 'json'),
    ])
    for (const x of [json, table, toNow]) expect(x.code, x.stderr).to.equal(0)
    const changes = jsonLines(json.stdout)
    expect(changes.map((c) => [c.change, c.key ?? 'bin'])).to.deep.equal([
      ['modified', '/h/a'],
      ['added', '/h/leased'],
      ['added', 'bin'],
    ])
    expect(table.stdout).to.contain('.x: 1 → 2')
    expect(jsonLines(toNow.stdout).map((c) => [c.change, c.key])).to.deep.equal([
      ['removed', '/h/b'],
      ['added', '/h/c'],
    ])
    const [compacted, future] = await Promise.all([
      run('diff', '--from', String(floor - 1), '--to', String(r.c)),
      run('diff', '--from', String(r.a1), '--to', String(r.c + 1000)),
    ])
    expect(compacted.code).to.equal(3)
    expect(future.code).to.equal(1)
    expect(future.stderr).to.contain('FUTURE_REVISION')
  })

  it('revert --dry-run shows the plan and writes nothing; revert writes one revision of ordinary events', async () => {
    const before = (await kv.status()).revision as number
    const dry = await run('revert', '--to-revision', String(r.a1), '--prefix', '/h/', '--dry-run', '-o', 'json')
    expect(dry.code, dry.stderr).to.equal(0)
    const plan = JSON.parse(dry.stdout) as { dryRun: boolean; revision?: number; changes: Array<Record<string, string>> }
    expect(plan.dryRun).to.equal(true)
    expect(plan).to.not.have.property('revision')
    expect(plan.changes.map((c) => [c.change, c.key ?? 'bin'])).to.deep.equal([
      ['modified', '/h/a'],
      ['removed', '/h/b'],
      ['added', '/h/c'],
      ['added', '/h/leased'],
      ['added', 'bin'],
    ])
    expect(plan.changes[0]).to.include({ value: '{"x":1,"keep":true}', previousValue: '{"x":2,"keep":true}' })
    expect((await kv.status()).revision).to.equal(before)
    const table = await run('revert', '--to-revision', String(r.a1), '--prefix', '/h/', '--dry-run')
    expect(table.stdout).to.contain('dry run: 5 key(s)').and.contain('.x: 2 → 1')

    const real = await run('revert', '--to-revision', String(r.a1), '--prefix', '/h/', '-o', 'json')
    expect(real.code, real.stderr).to.equal(0)
    const done = JSON.parse(real.stdout) as { revision: number }
    expect(done.revision).to.equal(before + 1)
    const [now, then] = await Promise.all([
      run('dump', '--rev', String(done.revision), '--prefix', '/h/', '-o', 'json'),
      run('dump', '--rev', String(r.a1), '--prefix', '/h/', '-o', 'json'),
    ])
    const values = (x: string) => (JSON.parse(x) as Dump).kvs.map((k) => [k.key, k.value])
    expect(values(now.stdout)).to.deep.equal(values(then.stdout))
    const events = (await kv.history('/h/', { prefix: true, from: done.revision, to: done.revision })).events
    expect(events.map((e) => [e.type, e.revision])).to.deep.equal([
      ['PUT', done.revision],
      ['PUT', done.revision],
      ['DELETE', done.revision],
      ['DELETE', done.revision],
      ['DELETE', done.revision],
    ])
    const again = await run('revert', '--to-revision', String(r.a1), '--prefix', '/h/')
    expect(again.stdout).to.contain('nothing to revert')
  })

  it('revert puts a leased key back with its lease while it lives, without one after it ended', async () => {
    const target = (await kv.put('/l/k', 'v', { lease })).revision
    await kv.delete('/l/k')
    const withLease = await run('revert', '--to-revision', String(target), '--prefix', '/l/')
    expect(withLease.code, withLease.stderr).to.equal(0)
    expect(String((await kv.get('/l/k'))!.lease)).to.equal(lease)
    await kv.leaseRevoke(lease) // deletes /l/k (and /h/leased's lease is gone too)
    const at = (await run('revert', '--to-time', new Date().toISOString(), '--prefix', '/l/', '--dry-run')).stdout
    expect(at).to.contain('nothing to revert')
    const back = await run('revert', '--to-revision', String(target), '--prefix', '/l/')
    expect(back.code, back.stderr).to.equal(0)
    const k = (await kv.get('/l/k'))!
    expect(String(k.value)).to.equal('v')
    expect(k.lease).to.equal(0n)
  })

  it('revert: bad inputs (future, compacted, time before the floor, a prefix with no keys, usage)', async () => {
    const head = (await kv.status()).revision as number
    const [future, compacted, beforeFloor, none] = await Promise.all([
      run('revert', '--to-revision', String(head + 10), '--prefix', '/h/'),
      run('revert', '--to-revision', String(floor - 1), '--prefix', '/h/'),
      run('revert', '--to-time', '2001-01-01T00:00:00Z', '--prefix', '/h/'),
      run('revert', '--to-revision', String(r.a1), '--prefix', '/nothing/'),
    ])
    const neither = await quick('revert', '--prefix', '/h/')
    expect(future.code).to.equal(1)
    expect(future.stderr).to.contain('FUTURE_REVISION')
    expect(compacted.code).to.equal(3)
    expect(beforeFloor.code).to.equal(3)
    expect(none.code).to.equal(0)
    expect(none.stdout).to.contain('nothing to revert')
    expect(neither.code).to.equal(2)
    expect((await kv.status()).revision).to.equal(head)
  })
})
