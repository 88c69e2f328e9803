/**
 * Cluster mode refuses what it must not run on: a stream of the cluster's name that kvlog did not make
 * (here: made by another program) stops `kvlog serve` with a message naming the stream; NATS unreachable
 * makes it retry with a log line per try instead of starting without its log.
 */
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect, StorageType } from 'nats'
import { freePort } from '../../support/etcd-process.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { KVLOG_BIN } from '../../support/server-process.js'
import { sleep } from '../../support/wait.js'

function serve(args: string[], dir: string) {
  const child = spawn(
    process.execPath,
    [KVLOG_BIN, 'serve', '--data-dir', dir, '--listen-http', '127.0.0.1:0', '--listen-grpc', '127.0.0.1:0', '--log-level', 'warn', ...args],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  )
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)))
  return { child, exited, stderr: () => stderr }
}

describe('kvlog serve --nats-url: bad start', function () {
  this.timeout(60_000)
  let nats: NatsCluster
  let dir: string
  before(async () => {
    nats = await startNatsCluster()
  })
  after(async () => {
    await nats?.stop()
  })
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-bad-start-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('refuses a stream of the cluster name that kvlog did not make', async () => {
    const nc = await connect({ servers: nats.urls.split(',') })
    const jsm = await nc.jetstreamManager()
    await jsm.streams.add({ name: 'KVLOG_foreign', subjects: ['orders.>'], storage: StorageType.File, num_replicas: 1 })
    await nc.close()
    const p = serve(['--nats-url', nats.urls, '--cluster-name', 'foreign', '--member-name', 'm0'], dir)
    const code = await p.exited
    expect(code).to.not.equal(0)
    expect(p.stderr()).to.contain('KVLOG_foreign')
  })

  it('retries an unreachable NATS with a log line, and does not serve without its log', async () => {
    const port = await freePort()
    const p = serve(['--nats-url', `nats://127.0.0.1:${port}`, '--member-name', 'm0'], dir)
    try {
      const deadline = Date.now() + 20_000
      while (!/unreachable.*retrying/.test(p.stderr()) && Date.now() < deadline) await sleep(100)
      expect(p.stderr()).to.match(/unreachable.*retrying/)
      expect(p.child.exitCode).to.equal(null)
    } finally {
      p.child.kill('SIGKILL')
      await p.exited
    }
  })
})
