import { expect } from 'chai'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isKvlogError } from '../../log/errors.js'
import { failpointsOn, parseFailpoints } from '../../log/failpoints.js'
import { startServerProcess } from '../support/server-process.js'

describe('log: failpoints (KVLOG_FAILPOINTS)', () => {
  it('are off unless the variable is set', () => {
    expect(process.env.KVLOG_FAILPOINTS).to.equal(undefined)
    expect(failpointsOn).to.equal(false)
  })

  it('parse panic, off, sleep(ms) and @N; anything else is INVALID_ARGUMENT', () => {
    const p = parseFailpoints('beforeCommit=panic; compactBatch=sleep(25)@3;leaderStepDown=off;armedBy=/tmp/x y')
    expect([...p.actions.keys()]).to.deep.equal(['beforeCommit', 'compactBatch', 'leaderStepDown'])
    expect(p.actions.get('leaderStepDown')).to.include({ kind: 'off', from: 1 })
    expect(p.actions.get('compactBatch')).to.include({ kind: 'sleep', ms: 25, from: 3 })
    expect(p.armedBy).to.equal('/tmp/x y')
    for (const bad of ['beforeCommit=explode', 'noSuchPoint=panic', 'beforeCommit']) {
      expect(() => parseFailpoints(bad), bad)
        .to.throw()
        .that.satisfies((e: unknown) => isKvlogError(e, 'INVALID_ARGUMENT'))
    }
  })

  it('a panic before the commit kills the server before the write is durable or answered', async function () {
    this.timeout(60_000)
    const root = await mkdtemp(join(tmpdir(), 'kvlog-fp-'))
    const armFile = join(root, 'arm')
    const dataDir = join(root, 'data')
    process.env.KVLOG_FAILPOINTS = `beforeCommit=panic;armedBy=${armFile}`
    const server = await startServerProcess([], dataDir).finally(() => delete process.env.KVLOG_FAILPOINTS)
    try {
      await writeFile(armFile, '')
      const exited = new Promise<string | null>((r) => server.child.on('exit', (_code, signal) => r(signal)))
      const body = JSON.stringify({ key: 'k', value: 'v' })
      const put = await fetch(`${server.http}/v1/kv`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body }).then(
        () => 'answered',
        () => 'failed',
      )
      expect(put).to.equal('failed')
      expect(await exited).to.equal('SIGKILL')
      expect(server.stderr()).to.contain('kvlog failpoint: beforeCommit panic')
      await server.cleanup()
      // Restarted without failpoints: the write was never acknowledged and is not there.
      const again = await startServerProcess([], server.dataDir)
      try {
        const res = await fetch(`${again.http}/v1/kv?key=k`)
        const body = (await res.json()) as { kvs: unknown[] }
        expect(body.kvs).to.deep.equal([])
      } finally {
        await again.cleanup()
      }
    } finally {
      await server.cleanup()
      await rm(root, { recursive: true, force: true })
    }
  })
})
