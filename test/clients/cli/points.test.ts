/**
 * Times wherever the CLI takes a revision, against a real server, in both output forms with exit codes:
 * relative (10m, 2h, 1s) and ISO 8601 times for get --rev, history --from/--to, diff --from/--to,
 * dump --rev/--at, revert --to-revision/--to-time, watch --rev, compact and cursor commit; history --from a future time gives nothing; history --limit;
 * malformed times are usage errors. Unit checks of the parser run in this process.
 */
import { expect } from 'chai'
import { KvlogClient } from '../../../clients/index.js'
import { parsePoint, spanMs } from '../../../clients/cli/points.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { sleep } from '../../support/wait.js'
import { jsonLines, kvlog, kvlogInProcess, watchLines } from '../run-cli.js'

describe('kvlog CLI: revisions or times (real server)', function () {
  this.timeout(60_000)
  let server: ServerProcess
  let ep: string
  let kv: KvlogClient
  /** Revisions written before and after a pause of 3.7 s; `between` is a time 1.2 s into the pause. */
  let revBefore: number
  let revAfter: number
  let between: string
  const run = (...args: string[]) => kvlog(args, { endpoint: ep })

  before(async () => {
    server = await startServerProcess()
    ep = server.http
    kv = new KvlogClient({ endpoint: ep })
    await kv.put('/t/a', '{"n":1}')
    revBefore = (await kv.put('/t/b', 'old')).revision
    await sleep(1200)
    between = new Date().toISOString()
    await sleep(2500)
    await kv.put('/t/a', '{"n":2}')
    revAfter = (await kv.put('/t/c', 'new')).revision
  })

  after(async () => {
    await server?.cleanup()
  })

  it('parses revisions, ISO 8601 times and spans; anything else is a usage error', () => {
    const now = Date.parse('2026-11-25T12:00:00Z')
    expect(parsePoint('42', '--rev', now)).to.deep.equal({ rev: 42 })
    expect(parsePoint('10m', '--rev', now)).to.deep.include({ time: now - 600_000 })
    expect(parsePoint('1h30m', '--rev', now)).to.deep.include({ time: now - 5_400_000 })
    expect(parsePoint('2026-11-22T21:00:00Z', '--rev', now)).to.deep.include({ time: Date.parse('2026-11-22T21:00:00Z') })
    expect(spanMs('2d')).to.equal(172_800_000)
    for (const bad of ['ten', '10x', '-5', '1.5', '5 m', '', 'yesterday', '12345678901234567890']) {
      expect(() => parsePoint(bad, '--rev', now), bad)
        .to.throw()
        .with.property('name', 'UsageError')
    }
  })

  it('get --rev TIME reads the state at that time, in both forms; a future time is FUTURE_REVISION (exit 1)', async () => {
    const [t, j, ago] = [
      await run('get', '/t/', '--prefix', '--rev', between),
      await run('get', '/t/a', '--rev', between, '-o', 'json'),
      await run('get', '/t/c', '--rev', '0s', '-o', 'json'),
    ]
    expect([t.code, j.code, ago.code], t.stderr + j.stderr + ago.stderr).to.deep.equal([0, 0, 0])
    expect(
      t.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((r) => r.split(/\s+/)[0]),
    ).to.deep.equal(['/t/a', '/t/b'])
    const jr = JSON.parse(j.stdout) as { revision: number; kvs: Array<{ value: string }> }
    expect(jr.revision).to.equal(revBefore)
    expect(jr.kvs[0].value).to.equal('{"n":1}')
    // 0s ago is now: the current state.
    expect((JSON.parse(ago.stdout) as { kvs: Array<{ value: string }> }).kvs[0].value).to.equal('new')
    const future = await run('get', '/t/a', '--rev', new Date(Date.now() + 3_600_000).toISOString())
    expect(future.code).to.equal(1)
    expect(future.stderr).to.contain('FUTURE_REVISION')
  })

  it('history: --from/--to as times (ISO and ago), --from a future time gives nothing, --limit N, in both forms', async () => {
    const since = await run('history', '/t/', '--prefix', '--from', between, '-o', 'json')
    expect(since.code, since.stderr).to.equal(0)
    expect(jsonLines(since.stdout).map((e) => e.revision)).to.deep.equal([revAfter - 1, revAfter])
    const untilThen = await run('history', '/t/', '--prefix', '--to', between)
    expect(
      untilThen.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((r) => Number(r.split(/\s+/)[0])),
    ).to.deep.equal([revBefore - 1, revBefore])
    // Times ago: an hour back reaches the first write; 0s ago is now.
    const recent = await run('history', '/t/', '--prefix', '--from', '1h', '--to', '0s', '-o', 'json')
    expect(jsonLines(recent.stdout).map((e) => e.revision)).to.deep.equal([revBefore - 1, revBefore, revAfter - 1, revAfter])

    for (const o of [[], ['-o', 'json']]) {
      const future = await run('history', '/t/', '--prefix', '--from', new Date(Date.now() + 60_000).toISOString(), ...o)
      expect(future.code, future.stderr).to.equal(0)
      expect(
        future.stdout
          .trim()
          .split('\n')
          .filter((l) => /^[0-9{]/.test(l)),
      ).to.deep.equal([])
    }
    const limited = await run('history', '/t/', '--prefix', '--limit', '3', '-o', 'json')
    expect(jsonLines(limited.stdout).map((e) => e.revision)).to.deep.equal([revBefore - 1, revBefore, revAfter - 1])
    const limitedTable = await run('history', '/t/', '--prefix', '--from', between, '--limit', '1')
    expect(limitedTable.stdout.trim().split('\n')).to.have.length(2)
    const zero = await run('history', '/t/', '--limit', '0')
    expect(zero.code).to.equal(2)
  })

  it('diff accepts what history accepts: times (ISO and ago) and revisions, in both forms', async () => {
    const [t, j] = [
      await run('diff', '--from', between, '--to', '1s', '/t/', '--prefix'),
      await run('diff', '--from', between, '--to', String(revAfter), '-o', 'json'),
    ]
    expect([t.code, j.code], t.stderr + j.stderr).to.deep.equal([0, 0])
    expect(t.stdout)
      .to.match(/^modified\s+\/t\/a\s+\.n: 1 → 2$/m)
      .and.match(/^added\s+\/t\/c/m)
    expect(jsonLines(j.stdout).map((x) => [x.change, x.key])).to.deep.equal([
      ['modified', '/t/a'],
      ['added', '/t/c'],
    ])
    const bad = await run('diff', '--from', 'then', '--to', '1s')
    expect(bad.code).to.equal(2)
  })

  it('dump and revert take what the others take: revisions, ISO 8601 and relative times, in both forms', async () => {
    // "That long ago", reaching back to `between` (rounded up to whole seconds: still inside the pause).
    const ago = () => `${Math.ceil((Date.now() - Date.parse(between)) / 1000)}s`
    const relative = await kvlogInProcess(['dump', '--at', ago(), '--prefix', '/t/', '-o', 'json'], ep)
    const viaRev = await kvlogInProcess(['dump', '--rev', between, '--prefix', '/t/', '-o', 'json'], ep)
    const now = await run('dump', '--rev', '1s', '--prefix', '/t/')
    expect([relative.code, viaRev.code, now.code], relative.stderr + viaRev.stderr + now.stderr).to.deep.equal([0, 0, 0])
    expect(JSON.parse(relative.stdout)).to.deep.include({ revision: revBefore, count: 2 })
    expect(JSON.parse(viaRev.stdout)).to.deep.include({ revision: revBefore, count: 2 })
    expect(now.stdout).to.match(/^\/t\/c\s+new\s/m)
    const plan = await kvlogInProcess(['revert', '--to-time', ago(), '--prefix', '/t/', '--dry-run', '-o', 'json'], ep)
    expect(plan.code, plan.stderr).to.equal(0)
    const planned = JSON.parse(plan.stdout) as { toRevision: number; changes: Array<{ change: string; key: string }> }
    expect(planned.toRevision).to.equal(revBefore)
    expect(planned.changes.map((x) => [x.change, x.key])).to.deep.equal([
      ['modified', '/t/a'],
      ['added', '/t/c'],
    ])
    const table = await kvlogInProcess(['revert', '--to-revision', between, '--prefix', '/t/', '--dry-run'], ep)
    expect(table.stdout).to.contain('dry run: 2 key(s) would be written')
    // --at and --to-time take times only; malformed or future points are refused.
    for (const args of [
      ['dump', '--at', String(revBefore)],
      ['dump', '--at', 'soon'],
      ['revert', '--to-time', '42', '--dry-run'],
    ]) {
      const bad = await kvlogInProcess(args, ep)
      expect(bad.code, args.join(' ')).to.equal(2)
    }
    const future = await kvlogInProcess(['dump', '--at', new Date(Date.now() + 3_600_000).toISOString()], ep)
    expect([future.code, future.stderr.includes('FUTURE_REVISION')]).to.deep.equal([1, true])
    expect((await kv.status()).revision).to.equal(revAfter)
  })

  it('watch --rev TIME starts at the first revision committed at or after it, in both forms', async () => {
    const json = await watchLines(['/t/', '--prefix', '--rev', between, '-o', 'json'], ep, 2)
    expect(jsonLines(json.join('\n')).map((e) => e.revision)).to.deep.equal([revAfter - 1, revAfter])
    const table = await watchLines(['/t/', '--prefix', '--rev', between], ep, 2)
    expect(table.map((l) => Number(l.split('\t')[0]))).to.deep.equal([revAfter - 1, revAfter])
    // An hour ago: from the first write on.
    const hour = await watchLines(['/t/', '--prefix', '--rev', '1h', '-o', 'json'], ep, 4)
    expect(jsonLines(hour.join('\n')).map((e) => e.revision)).to.deep.equal([revBefore - 1, revBefore, revAfter - 1, revAfter])
    const future = await kvlogInProcess(['watch', '/t/', '--rev', new Date(Date.now() + 60_000).toISOString()], ep)
    expect(future.code).to.equal(2)
  })

  it('cursor commit and compact take times: the state at that time', async () => {
    const c = await run('cursor', 'commit', 'pt-reader', between, '-o', 'json')
    expect(c.code, c.stderr).to.equal(0)
    expect(JSON.parse(c.stdout).revision).to.equal(revBefore)
    await kv.deleteCursor('pt-reader')
    const compact = await run('compact', between, '-o', 'json')
    expect(compact.code, compact.stderr).to.equal(0)
    expect(JSON.parse(compact.stdout).compactRevision).to.equal(revBefore)
    expect((await kv.status()).compactRevision).to.equal(revBefore)
  })
})
