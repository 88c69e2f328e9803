import { spawnSync } from 'node:child_process'
import { expect } from 'chai'
import { KVLOG_BIN, startServerProcess, type ServerProcess } from '../../support/server-process.js'

describe('kvlog serve (real process)', function () {
  this.timeout(30_000)
  let server: ServerProcess | undefined

  afterEach(async () => {
    await server?.cleanup()
    server = undefined
  })

  it('writes the ready file, answers health checks and status, and drains on SIGTERM with exit 0', async () => {
    server = await startServerProcess()
    expect(server.http).to.match(/^http:\/\/127\.0\.0\.1:\d+$/)
    const health = await fetch(`${server.http}/healthz`)
    expect(health.status).to.equal(200)
    const ready = await (await fetch(`${server.http}/readyz`)).json()
    expect(ready).to.deep.equal({ ok: true, revision: 1 })
    const status = (await (await fetch(`${server.http}/v1/status`)).json()) as { revision: number; dbSize: number }
    expect(status.revision).to.equal(1)
    expect(status.dbSize).to.be.greaterThan(0)
    expect(await server.stop('SIGTERM')).to.equal(0)
  })

  it('answers unknown routes with a stable NOT_FOUND error body', async () => {
    server = await startServerProcess()
    const res = await fetch(`${server.http}/no/such/route`)
    expect(res.status).to.equal(404)
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('NOT_FOUND')
  })

  it('refuses a bad setting at start with a message naming it and exit code 2', () => {
    const r = spawnSync(process.execPath, [KVLOG_BIN, 'serve', '--max-txn-ops', '0'], { encoding: 'utf8' })
    expect(r.status).to.equal(2)
    expect(r.stderr).to.contain('--max-txn-ops')
  })

  it('rejects an unknown command with usage exit code 2', () => {
    const r = spawnSync(process.execPath, [KVLOG_BIN, 'frobnicate'], { encoding: 'utf8' })
    expect(r.status).to.equal(2)
    expect(r.stderr).to.contain('unknown command')
  })
})
