/**
 * CLI edges against a real `kvlog serve`: history --limit N --newest gives the last N changes (across
 * many pages of revisions); diff --to defaults to now and takes `now`; -w json is -o json; watch -o json
 * carries the author that history has; user, role and auth --help describe every flag with examples.
 */
import { expect } from 'chai'
import { KvlogClient } from '../../../clients/index.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { jsonLines, kvlog, kvlogInProcess, watchProcess } from '../run-cli.js'

describe('kvlog CLI: history --newest, diff to now, -w, watch authors, auth help (real server)', function () {
  this.timeout(60_000)
  let server: ServerProcess
  let kv: KvlogClient
  const run = (...args: string[]) => kvlog(args, { endpoint: server.http })
  let first = 0

  before(async () => {
    server = await startServerProcess()
    kv = new KvlogClient({ endpoint: server.http })
    first = (await kv.put('/e/a', '0')).revision
    for (let i = 1; i < 50; i++) {
      await kv.put('/e/a', String(i))
      await kv.put('/other', String(i))
    }
  })
  after(async () => {
    await server?.cleanup()
  })

  it('history --limit N gives the first N; with --newest the last N, oldest first', async () => {
    const oldest = jsonLines((await run('history', '/e/a', '--limit', '3', '-o', 'json')).stdout)
    expect(oldest.map((e) => e.value)).to.deep.equal(['0', '1', '2'])
    const newest = await run('history', '/e/a', '--limit', '3', '--newest', '-o', 'json')
    expect(newest.code, newest.stderr).to.equal(0)
    expect(jsonLines(newest.stdout).map((e) => e.value)).to.deep.equal(['47', '48', '49'])
    const bounded = jsonLines((await run('history', '/e/a', '--limit', '2', '--newest', '--to', String(first + 10), '-o', 'json')).stdout)
    expect(bounded.map((e) => e.value)).to.deep.equal(['4', '5'])
    const all = jsonLines((await run('history', '/e/a', '--limit', '500', '--newest', '-o', 'json')).stdout)
    expect(all).to.have.length(50)
    expect((await run('history', '/e/a', '--newest')).code).to.equal(2)
  })

  it('diff --to defaults to now and takes now; -w json is -o json', async () => {
    const before = await kv.put('/e/d', 'x')
    await kv.put('/e/d', 'y')
    const implicit = await run('diff', '--from', String(before.revision), '/e/', '--prefix', '-w', 'json')
    const explicit = await run('diff', '--from', String(before.revision), '--to', 'now', '/e/', '--prefix', '-o', 'json')
    expect(implicit.code, implicit.stderr).to.equal(0)
    expect(jsonLines(implicit.stdout)).to.deep.equal(jsonLines(explicit.stdout))
    expect(jsonLines(implicit.stdout)).to.deep.equal([
      {
        change: 'modified',
        key: '/e/d',
        before: { value: 'x', modRevision: before.revision },
        after: { value: 'y', modRevision: before.revision + 1 },
      },
    ])
  })

  it('watch -o json carries the author, as history does', async () => {
    const w = watchProcess(['/e/w', '-o', 'json'], server.http)
    let watched: { revision: number; author: unknown }
    try {
      const lines = w.waitLines(1, 30_000)
      const writer = setInterval(() => void kv.put('/e/w', 'v'), 300)
      try {
        const [line] = await lines
        watched = JSON.parse(line!) as typeof watched
      } finally {
        clearInterval(writer)
      }
    } finally {
      await w.stop()
    }
    // An anonymous write through the native door: the door, and the writing client's agent.
    expect(watched.author).to.deep.include({ door: 'http' })
    const history = jsonLines((await run('history', '/e/w', '-o', 'json')).stdout) as Array<{ revision: number; author: unknown }>
    const same = history.find((h) => h.revision === watched.revision)
    expect(same?.author).to.deep.equal(watched.author)
  })

  it('user, role and auth --help describe every flag and give examples', async () => {
    for (const name of ['user', 'role', 'auth']) {
      const r = await kvlogInProcess([name, '--help'])
      expect(r.code, name).to.equal(0)
      for (const line of r.stdout.split('\n').filter((l) => /^ {2}--/.test(l)))
        expect(line, `${name}: ${line}`).to.match(/^ {2}--\S+( \S+)? +\S/)
      expect(r.stdout.split('\nExamples:\n')[1], name).to.match(/^ {2}kvlog /)
      expect(r.stdout, name)
        .to.match(/^ {2}--user /m)
        .and.match(/^ {2}--token /m)
    }
  })
})
