/**
 * The CLI's input and output edges against a real server, in both output forms with exit codes: values
 * from stdin and files (a 5 MiB binary value byte for byte), --keys-only and --prev-kv in tables, sizes
 * in status, output piped into a reader that stops early, watch --cursor, compact that would expire
 * cursors, several endpoints and endpoints without a scheme, unreachable endpoints with their cause, and
 * a watch that gives up on an endpoint that never answered.
 */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { KvlogClient } from '../../../clients/index.js'
import { KVLOG_BIN, startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { jsonLines, kvlog, watchLines } from '../run-cli.js'
import { closedPort, TcpProxy } from '../tcp-proxy.js'

describe('kvlog CLI: input and output (real server)', function () {
  this.timeout(60_000)
  let server: ServerProcess
  let ep: string
  let kv: KvlogClient
  let tmp: string
  const run = (...args: string[]) => kvlog(args, { endpoint: ep })

  before(async () => {
    server = await startServerProcess(['--max-request-bytes', String(16 * 1024 * 1024)])
    ep = server.http
    kv = new KvlogClient({ endpoint: ep })
    tmp = await mkdtemp(join(tmpdir(), 'kvlog-cli-io-'))
  })

  after(async () => {
    await server?.cleanup()
    if (tmp) await rm(tmp, { recursive: true, force: true })
  })

  it('put KEY - takes a 5 MiB binary value from stdin; get --print-value-only gives it back byte for byte', async () => {
    const value = randomBytes(5 * 1024 * 1024)
    const put = await kvlog(['put', '/io/big', '-', '-o', 'json'], { endpoint: ep, input: value })
    expect(put.code, put.stderr).to.equal(0)
    expect(JSON.parse(put.stdout).revision).to.be.a('number')
    const got = await run('get', '/io/big', '--print-value-only')
    expect(got.code, got.stderr).to.equal(0)
    expect(got.bytes!.equals(value)).to.equal(true)
    expect((await kv.get('/io/big'))!.value.equals(value)).to.equal(true)
    // A missing key prints nothing and exits 1.
    const missing = await run('get', '/io/none', '--print-value-only')
    expect([missing.code, missing.stdout]).to.deep.equal([1, ''])
  })

  it('put --file takes the value from a file, in both forms; VALUE and --file together is a usage error', async () => {
    const file = join(tmp, 'v.json')
    await writeFile(file, '{"a":1}\n')
    const [t, j] = [await run('put', '/io/file', '--file', file), await run('put', '/io/file2', '--file', file, '-o', 'json')]
    expect([t.code, j.code]).to.deep.equal([0, 0])
    expect(t.stdout).to.match(/^OK revision \d+/)
    expect(JSON.parse(j.stdout).revision).to.be.a('number')
    expect((await kv.get('/io/file'))!.value.toString()).to.equal('{"a":1}\n')
    const stdinText = await kvlog(['put', '/io/stdin', '-'], { endpoint: ep, input: 'from stdin' })
    expect(stdinText.code).to.equal(0)
    expect((await kv.get('/io/stdin'))!.value.toString()).to.equal('from stdin')
    const both = await run('put', '/io/x', 'v', '--file', file)
    const neither = await run('put', '/io/x')
    const missing = await run('put', '/io/x', '--file', join(tmp, 'nope'))
    expect([both.code, neither.code, missing.code]).to.deep.equal([2, 2, 1])
    expect(missing.stderr).to.contain('ENOENT')
  })

  it('--keys-only and --prev-kv are honoured in tables (get, del, put, watch) as in JSON', async () => {
    await kv.put('/kp/a', 'va')
    await kv.put('/kp/b', 'vb')
    const keys = await run('get', '/kp/', '--prefix', '--keys-only')
    expect(keys.code).to.equal(0)
    const rows = keys.stdout
      .trim()
      .split('\n')
      .map((r) => r.split(/\s+/))
    expect(rows[0]).to.deep.equal(['KEY', 'CREATE', 'MOD', 'VERSION'])
    expect(rows.slice(1).map((r) => r[0])).to.deep.equal(['/kp/a', '/kp/b'])
    expect(keys.stdout).to.not.contain('va')
    const keysJson = await run('get', '/kp/', '--prefix', '--keys-only', '-o', 'json')
    expect((JSON.parse(keysJson.stdout) as { kvs: Array<Record<string, unknown>> }).kvs.map((k) => k.value ?? '')).to.deep.equal(['', ''])

    const put = await run('put', '/kp/a', 'va2', '--prev-kv')
    expect(put.stdout).to.contain('(was va)')
    const del = await run('del', '/kp/', '--prefix', '--prev-kv')
    expect(del.code).to.equal(0)
    const delRows = del.stdout.trim().split('\n')
    expect(delRows[0]).to.match(/^deleted 2 at revision \d+$/)
    expect(delRows.slice(1).map((r) => r.split(/\s+/).slice(0, 2))).to.deep.equal([
      ['KEY', 'VALUE'],
      ['/kp/a', 'va2'],
      ['/kp/b', 'vb'],
    ])

    // watch --prev-kv in a table: the value before each change as a last column.
    const from = (await kv.put('/kw/a', 'one')).revision
    await kv.put('/kw/a', 'two')
    await kv.delete('/kw/a')
    const lines = (await watchLines(['/kw/', '--prefix', '--rev', String(from), '--prev-kv'], ep, 3)).map((l) => l.split('\t'))
    expect(lines.map((l) => l.slice(1))).to.deep.equal([
      ['PUT', '/kw/a', 'one', '(none)'],
      ['PUT', '/kw/a', 'two', 'one'],
      ['DELETE', '/kw/a', '', 'two'],
    ])
  })

  it('status shows sizes in human units (JSON keeps bytes); status and long output piped into head exit quietly', async () => {
    for (let i = 0; i < 300; i++) await kv.put(`/pipe/${String(i).padStart(4, '0')}`, 'x'.repeat(400))
    const [t, j] = [await run('status'), await run('status', '-o', 'json')]
    expect([t.code, j.code]).to.deep.equal([0, 0])
    expect(t.stdout).to.match(/^db size\s+[0-9.]+ (B|KiB|MiB|GiB)$/m)
    expect(JSON.parse(j.stdout).dbSize).to.be.a('number')
    for (const command of ['status', 'get /pipe/ --prefix', 'history /pipe/ --prefix -o json']) {
      const sh = spawnSync('bash', ['-c', `set -o pipefail; node ${KVLOG_BIN} ${command} | head -1`], {
        env: { ...process.env, KVLOG_ENDPOINT: ep },
        encoding: 'utf8',
      })
      expect(sh.status, `${command}: ${sh.stderr}`).to.equal(0)
      expect(sh.stderr).to.equal('')
      expect(sh.stdout.split('\n')).to.have.length(2)
    }
  })

  it('watch --cursor NAME starts after the cursor, in both forms; --rev with --cursor is a usage error', async () => {
    const r1 = (await kv.put('/wc/a', '1')).revision
    await kv.commitCursor('wc-reader', r1)
    const r2 = (await kv.put('/wc/a', '2')).revision
    const json = await watchLines(['/wc/', '--prefix', '--cursor', 'wc-reader', '-o', 'json'], ep, 1)
    expect(jsonLines(json.join('\n')).map((e) => [e.revision, e.value])).to.deep.equal([[r2, '2']])
    const table = await watchLines(['/wc/', '--prefix', '--cursor', 'wc-reader'], ep, 1)
    expect(table[0].split('\t').slice(0, 4)).to.deep.equal([String(r2), 'PUT', '/wc/a', '2'])
    const both = await run('watch', '/wc/', '--cursor', 'wc-reader', '--rev', '3')
    expect(both.code).to.equal(2)
    const unknown = await run('watch', '/wc/', '--cursor', 'no-such-cursor')
    expect(unknown.code).to.equal(1)
    expect(unknown.stderr).to.match(/NOT_FOUND/)
  })

  it('compact refuses without --force when it would expire a cursor (exit 1, nothing compacted), in both forms', async () => {
    const r1 = (await kv.put('/cc/a', '1')).revision
    await kv.commitCursor('cc-slow', r1)
    await kv.put('/cc/a', '2')
    const target = (await kv.put('/cc/a', '3')).revision
    const floor = (await kv.status()).compactRevision
    for (const o of [[], ['-o', 'json']]) {
      const refused = await run('compact', String(target), ...o)
      expect(refused.code).to.equal(1)
      expect(refused.stderr).to.contain('cc-slow').and.contain('--force')
      expect(refused.stdout).to.equal('')
    }
    expect((await kv.status()).compactRevision).to.equal(floor)
    expect((await kv.cursors()).find((c) => c.name === 'cc-slow')?.expired).to.equal(false)
    const forced = await run('compact', String(target), '--force', '-o', 'json')
    expect(forced.code, forced.stderr).to.equal(0)
    expect(JSON.parse(forced.stdout).compactRevision).to.equal(target)
    expect((await kv.cursors()).find((c) => c.name === 'cc-slow')?.expired).to.equal(true)
    await kv.deleteCursor('cc-slow')
    await kv.deleteCursor('wc-reader')
    // No cursor in the way: no question asked.
    const plain = await run('compact', String((await kv.put('/cc/a', '4')).revision))
    expect(plain.code, plain.stderr).to.equal(0)
    expect(plain.stdout).to.match(/^compacted to revision \d+/)
  })

  it('--endpoints and KVLOG_ENDPOINTS: a dead member is skipped; endpoints without a scheme are accepted', async () => {
    const dead = `127.0.0.1:${await closedPort()}`
    const live = ep.replace('http://', '')
    const viaFlag = await kvlog(['put', '/ep/a', '1', '--endpoints', `${dead},${live}`])
    const viaEnv = await kvlog(['get', '/ep/a', '-o', 'json'], { env: { KVLOG_ENDPOINTS: `${dead}, ${live}` } })
    const bare = await kvlog(['get', '/ep/a', '--endpoint', live])
    expect([viaFlag.code, viaEnv.code, bare.code], viaFlag.stderr + viaEnv.stderr + bare.stderr).to.deep.equal([0, 0, 0])
    expect((JSON.parse(viaEnv.stdout) as { kvs: Array<{ value: string }> }).kvs[0].value).to.equal('1')
    expect(bare.stdout).to.contain('/ep/a')
    const both = await kvlog(['get', '/ep/a', '--endpoint', live, '--endpoints', live])
    const bad = await kvlog(['get', '/ep/a', '--endpoint', 'ftp://x:1'])
    expect([both.code, bad.code]).to.deep.equal([2, 2])
  })

  it('unreachable endpoints are reported with the cause, in both forms (exit 1)', async () => {
    const port = await closedPort()
    for (const o of [[], ['-o', 'json']]) {
      const r = await kvlog(['get', '/x', '--endpoint', `127.0.0.1:${port}`, ...o])
      expect(r.code).to.equal(1)
      expect(r.stderr.trim()).to.equal(`kvlog get: cannot reach http://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`)
    }
    const blocked = await kvlog(['status', '--endpoint', 'http://127.0.0.1:1'])
    expect(blocked.code).to.equal(1)
    expect(blocked.stderr).to.contain('cannot reach http://127.0.0.1:1: ').and.not.contain('undefined')
  })

  it('watch gives up after --connect-timeout on an endpoint that never answered (exit 1), in both forms', async () => {
    const port = await closedPort()
    for (const o of [[], ['-o', 'json']]) {
      const t0 = Date.now()
      const r = await kvlog(['watch', '/x', '--endpoint', `127.0.0.1:${port}`, '--connect-timeout', '1s', ...o])
      expect(r.code).to.equal(1)
      expect(r.stderr).to.contain('ECONNREFUSED').and.contain(`127.0.0.1:${port}`)
      expect(Date.now() - t0).to.be.below(8000)
    }
    // An endpoint that accepts connections and never answers (a black hole).
    const proxy = await TcpProxy.start(ep)
    proxy.swallowResponses = true
    try {
      const r = await kvlog(['watch', '/x', '--endpoint', proxy.url, '--connect-timeout', '1s'])
      expect(r.code).to.equal(1)
      expect(r.stderr).to.contain('no watch created')
    } finally {
      await proxy.close()
    }
    const bad = await run('watch', '/x', '--connect-timeout', 'soon')
    expect(bad.code).to.equal(2)
  })
})
