/**
 * Cluster mode refuses what it must not run on: a stream of the cluster's name that kvlog did not make
 * (here: made by another program) stops `kvlog serve` with a message naming the stream; NATS unreachable
 * makes it retry with a log line per try instead of starting without its log, /readyz answering 503.
 * A nats-server without JetStream gets NO_JETSTREAM lines (in the log's JSON, like every other line); one
 * unclustered nats-server with the default replicas stops it with INVALID_ARGUMENT naming --nats-replicas.
 */
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect, StorageType } from 'nats'
import { freePort } from '../../support/free-port.js'
import { NATS_SERVER_BIN, startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { KVLOG_BIN } from '../../support/server-process.js'
import { sleep, waitFor } from '../../support/wait.js'

function serve(args: string[], dir: string, env: Record<string, string> = {}) {
  const child = spawn(
    process.execPath,
    [KVLOG_BIN, 'serve', '--data-dir', dir, '--listen-http', '127.0.0.1:0', '--listen-grpc', '127.0.0.1:0', '--log-level', 'warn', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
  )
  let stderr = ''
  let stdout = ''
  child.stderr.on('data', (d) => (stderr += d))
  child.stdout.on('data', (d) => (stdout += d))
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)))
  return { child, exited, stderr: () => stderr, stdout: () => stdout }
}

/** One nats-server of its own (no cluster), with or without JetStream; killed after the test. */
async function loneNatsServer(dir: string, jetStream: boolean) {
  const port = await freePort()
  const child = spawn(NATS_SERVER_BIN, ['-a', '127.0.0.1', '-p', String(port), ...(jetStream ? ['-js', '-sd', join(dir, 'nats')] : [])], {
    stdio: 'ignore',
  })
  await waitFor('the nats-server to listen', () => child.exitCode === null)
  return { url: `nats://127.0.0.1:${port}`, stop: () => child.kill('SIGKILL') }
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

  it('serves on its fixed HTTP address once its log is open (the starting listener hands the address over)', async () => {
    const httpPort = await freePort()
    const p = serve(
      ['--nats-url', nats.urls, '--cluster-name', 'handover', '--member-name', 'm0', '--listen-http', `127.0.0.1:${httpPort}`],
      dir,
    )
    try {
      const deadline = Date.now() + 30_000
      let status = 0
      while (status !== 200 && Date.now() < deadline && p.child.exitCode === null) {
        status = (await fetch(`http://127.0.0.1:${httpPort}/readyz`).catch(() => undefined))?.status ?? 0
        if (status !== 200) await sleep(100)
      }
      expect(status, p.stderr()).to.equal(200)
      const put = await fetch(`http://127.0.0.1:${httpPort}/v1/kv`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key: 'a', value: 'b' }),
      })
      expect(put.status).to.equal(200)
    } finally {
      p.child.kill('SIGKILL')
      await p.exited
    }
  })

  it('retries an unreachable NATS with a log line, and does not serve without its log (/readyz 503)', async () => {
    const port = await freePort()
    const httpPort = await freePort()
    const p = serve(['--nats-url', `nats://127.0.0.1:${port}`, '--member-name', 'm0', '--listen-http', `127.0.0.1:${httpPort}`], dir)
    try {
      const deadline = Date.now() + 20_000
      while (!/unreachable.*retrying/.test(p.stdout()) && Date.now() < deadline) await sleep(100)
      expect(p.stdout()).to.match(/unreachable.*retrying/)
      expect(p.child.exitCode).to.equal(null)
      const ready = await fetch(`http://127.0.0.1:${httpPort}/readyz`)
      expect(ready.status).to.equal(503)
      expect(((await ready.json()) as { error: { code: string } }).error.code).to.equal('UNAVAILABLE')
      expect((await fetch(`http://127.0.0.1:${httpPort}/healthz`)).status).to.equal(200)
      expect((await fetch(`http://127.0.0.1:${httpPort}/v1/kv?key=a`)).status).to.equal(503)
    } finally {
      p.child.kill('SIGKILL')
      await p.exited
    }
  })

  it('says JetStream may be off (NO_JETSTREAM) when the nats-server answers no JetStream requests, in JSON log lines', async () => {
    const nats = await loneNatsServer(dir, false)
    // A process warning as the server's own emitWarning calls make them: it must reach the log as JSON too.
    const warn = 'data:text/javascript,setTimeout(()=>process.emitWarning(%22kvlog%20test%20warning%22),500)'
    const p = serve(['--nats-url', nats.url, '--member-name', 'm0', '--log-level', 'info', '--log-format', 'json'], dir, {
      NODE_OPTIONS: `--import=${warn}`,
    })
    try {
      const lines = () =>
        p
          .stdout()
          .split('\n')
          .filter((l) => l !== '')
      const deadline = Date.now() + 30_000
      const seen = () => p.stdout().includes('NO_JETSTREAM') && p.stdout().includes('kvlog test warning')
      while (!seen() && Date.now() < deadline && p.child.exitCode === null) await sleep(100)
      expect(seen(), p.stdout() + p.stderr()).to.equal(true)
      for (const line of lines()) expect(() => JSON.parse(line) as unknown, line).to.not.throw()
      const records = lines().map((l) => JSON.parse(l) as { level: number; msg: string; warning?: string })
      expect(records.find((r) => r.msg.includes('NO_JETSTREAM'))?.level).to.equal(40)
      expect(records.find((r) => r.msg === 'kvlog test warning')).to.include({ level: 40, warning: 'Warning' })
      expect(p.stderr(), 'nothing in plain text beside the JSON log').to.equal('')
    } finally {
      p.child.kill('SIGKILL')
      await p.exited
      nats.stop()
    }
  })

  it('stops with INVALID_ARGUMENT naming --nats-replicas 1 on one unclustered nats-server with the default replicas', async () => {
    const nats = await loneNatsServer(dir, true)
    try {
      const p = serve(['--nats-url', nats.url, '--member-name', 'm0'], dir)
      expect(await p.exited).to.equal(1)
      expect(p.stderr()).to.match(/^kvlog serve: INVALID_ARGUMENT: .*--nats-replicas 1/m)
      const one = serve(
        ['--nats-url', nats.url, '--member-name', 'm0', '--nats-replicas', '1', '--cluster-name', 'one', '--log-level', 'info'],
        join(dir, 'one'),
      )
      try {
        const deadline = Date.now() + 30_000
        while (!one.stdout().includes('kvlog serving') && Date.now() < deadline && one.child.exitCode === null) await sleep(100)
        expect(one.stdout(), one.stderr()).to.include('kvlog serving')
      } finally {
        one.child.kill('SIGKILL')
        await one.exited
      }
    } finally {
      nats.stop()
    }
  })
})
