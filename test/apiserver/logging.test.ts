/**
 * The server's log, from a real `kvlog serve`: one format for every line (JSON with ISO 8601 times by
 * default when stdout is not a terminal; text with --log-format text), a line at start with the
 * addresses, one per request answered with an error status (a 404, and a 415 from the resource API), one per
 * etcd gRPC call that fails (an empty key, a future revision: method, status, peer, duration), and lines at stop.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { lineLogger, loggerOptions, logsAt, textLine } from '../../apiserver/logging.js'
import { etcdGrpc } from '../support/etcd-grpc.js'
import { KVLOG_BIN } from '../support/server-process.js'
import { sleep } from '../support/wait.js'

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

interface Addresses {
  http: string
  grpc: string
}

/** Runs a server until `drive` is done with it (by default: a 404, a 415, two failed etcd calls), then SIGTERM; resolves with its stdout and exit code. */
async function serveAndStop(
  extra: string[],
  drive: (ready: Addresses) => Promise<void> = someFailedRequests,
): Promise<{ stdout: string; stderr: string; code: number | string; http: string; grpc: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'kvlog-logs-'))
  const readyFile = join(dir, 'ready.json')
  const child = spawn(
    process.execPath,
    [
      KVLOG_BIN,
      'serve',
      '--data-dir',
      join(dir, 'data'),
      '--listen-http',
      '127.0.0.1:0',
      '--listen-grpc',
      '127.0.0.1:0',
      '--ready-file',
      readyFile,
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)))
  try {
    let ready: Addresses | undefined
    const deadline = Date.now() + 20_000
    while (ready === undefined) {
      expect(Date.now(), stderr).to.be.below(deadline)
      expect(child.exitCode, stderr).to.equal(null)
      ready = await readFile(readyFile, 'utf8').then(
        (t) => JSON.parse(t) as { http: string; grpc: string },
        () => undefined,
      )
      if (ready === undefined) await sleep(50)
    }
    await drive(ready)
    child.kill('SIGTERM')
    const code = await exited
    return { stdout, stderr, code, ...ready }
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await rm(dir, { recursive: true, force: true })
  }
}

/** A 404 and a 415 on the native door, two failed etcd calls (an empty key, a future revision) and good ones. */
async function someFailedRequests(ready: Addresses): Promise<void> {
  expect((await fetch(`${ready.http}/no/such/route`)).status).to.equal(404)
  // Server-side apply is not supported: 415 from the resource API.
  const apply = await fetch(`${ready.http}/api/v1/namespaces/default/configmaps/x`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/apply-patch+yaml' },
    body: 'a: 1',
  })
  expect(apply.status).to.equal(415)
  expect((await fetch(`${ready.http}/v1/status`)).status).to.equal(200)
  // Two bad etcd calls (an empty key; a future revision) and a good one.
  const etcd = etcdGrpc(ready.grpc)
  try {
    const codes = await Promise.all([
      etcd.call('KV', 'Range', { key: Buffer.alloc(0) }).catch((e: { code: number }) => e.code),
      etcd.call('KV', 'Range', { key: Buffer.from('a'), revision: 1000 }).catch((e: { code: number }) => e.code),
    ])
    expect(codes).to.deep.equal([3, 11])
    await etcd.call('KV', 'Range', { key: Buffer.from('a') })
  } finally {
    etcd.close()
  }
}

describe('kvlog serve: the log (real process)', function () {
  this.timeout(60_000)

  it('JSON by default off a terminal: every line parses, ISO times, start with addresses, failed requests, stop', async () => {
    const r = await serveAndStop([])
    expect(r.code).to.equal(0)
    expect(r.stderr).to.equal('')
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    for (const l of lines) {
      expect(l.time, JSON.stringify(l)).to.match(ISO)
      expect(l.level).to.be.a('number')
    }
    const start = lines.find((l) => l.msg === 'kvlog serving')
    expect(start).to.include({ http: r.http, grpc: r.grpc, ui: `${r.http}/ui/` })
    const failed = lines.filter((l) => l.msg === 'request failed' && l.door !== 'etcd')
    expect(failed.map((l) => [l.method, l.url, l.statusCode])).to.deep.equal([
      ['GET', '/no/such/route', 404],
      ['PATCH', '/api/v1/namespaces/default/configmaps/x', 415],
    ])
    expect(lines.some((l) => l.url === '/v1/status')).to.equal(false)
    const calls = lines.filter((l) => l.msg === 'request failed' && l.door === 'etcd')
    expect(calls.map((l) => [l.level, l.method, l.code, l.grpcStatus]).sort()).to.deep.equal([
      [30, '/etcdserverpb.KV/Range', 'INVALID_ARGUMENT', 3],
      [30, '/etcdserverpb.KV/Range', 'OUT_OF_RANGE', 11],
    ])
    for (const l of calls) {
      expect(l.peer).to.match(/^127\.0\.0\.1:[0-9]+$/)
      expect(l.ms).to.be.a('number')
    }
    expect(calls.find((l) => l.code === 'OUT_OF_RANGE')).to.include({ kvlogCode: 'FUTURE_REVISION' })
    const stopping = lines.findIndex((l) => l.msg === 'kvlog stopping')
    expect(lines[stopping]).to.include({ signal: 'SIGTERM' })
    expect(lines.findIndex((l) => l.msg === 'kvlog stopped')).to.be.greaterThan(stopping)
  })

  it('--log-format text: time, level, message and key=value on every line', async () => {
    const r = await serveAndStop(['--log-format', 'text'])
    expect(r.code).to.equal(0)
    const lines = r.stdout.trim().split('\n')
    for (const l of lines) expect(l).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z (INFO |WARN |ERROR) \S/)
    expect(lines.find((l) => l.includes('kvlog serving')))
      .to.contain(`http=${r.http}`)
      .and.contain(`grpc=${r.grpc}`)
    expect(lines.filter((l) => l.includes('request failed'))).to.have.length(4)
    expect(lines.find((l) => l.includes('code=INVALID_ARGUMENT')))
      .to.contain('door=etcd method=/etcdserverpb.KV/Range')
      .and.match(/ peer=127\.0\.0\.1:[0-9]+ ms=[0-9]+$/)
    expect(lines.find((l) => l.includes('statusCode=415'))).to.contain('method=PATCH url=/api/v1/namespaces/default/configmaps/x')
    expect(lines[lines.length - 1]).to.contain('kvlog stopped')
  })

  it('a flood of failed requests on both doors: at most --log-failed-requests-per-second lines a second, the rest counted in a warn line', async () => {
    const each = 60
    let seconds = 0
    const r = await serveAndStop(['--log-failed-requests-per-second', '5'], async (ready) => {
      const started = Date.now()
      const etcd = etcdGrpc(ready.grpc)
      try {
        await Promise.all(
          Array.from({ length: each }, async () => {
            expect((await fetch(`${ready.http}/no/such/route`)).status).to.equal(404)
            expect(await etcd.call('KV', 'Range', { key: Buffer.alloc(0) }).catch((e: { code: number }) => e.code)).to.equal(3)
          }),
        )
      } finally {
        etcd.close()
      }
      seconds = Math.ceil((Date.now() - started) / 1000) + 1
    })
    expect(r.code).to.equal(0)
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    const logged = lines.filter((l) => l.msg === 'request failed')
    const summaries = lines.filter((l) => l.msg === 'failed requests not logged')
    // Every failed request is either logged or counted; within the budget of the seconds the flood took.
    const counted = summaries.reduce((n, l) => n + Number(l.notLogged), 0)
    expect(logged.length + counted).to.equal(2 * each)
    expect(logged.length).to.be.at.most(5 * seconds)
    expect(summaries.length).to.be.at.least(1)
    for (const l of summaries) expect(l).to.include({ level: 40, perSecond: 5 })
  })

  it('a bad --log-format is refused at start (exit 2)', async () => {
    const child = spawn(process.execPath, [KVLOG_BIN, 'serve', '--log-format', 'xml'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    const code = await new Promise((resolve) => child.on('exit', resolve))
    expect(code).to.equal(2)
    expect(stderr).to.contain('--log-format')
  })

  it('textLine: fields are quoted when they hold spaces; errors show type and message; non-JSON passes through', () => {
    const line = textLine(
      JSON.stringify({
        level: 50,
        time: '2026-11-25T04:50:00.123Z',
        msg: 'boom',
        err: { type: 'Error', message: 'bad thing', stack: 's' },
        path: 'a b',
      }),
    )
    expect(line).to.equal('2026-11-25T04:50:00.123Z ERROR boom err="Error: bad thing" path="a b"\n')
    expect(textLine('plain')).to.equal('plain\n')
  })

  it("'auto' writes text to a terminal and JSON elsewhere; 'silent' turns the log off", () => {
    const out = (isTTY: boolean) => ({ isTTY, write: () => true })
    expect(loggerOptions({ logLevel: 'info', logFormat: 'auto' }, out(true))).to.have.property('stream')
    expect(loggerOptions({ logLevel: 'info', logFormat: 'auto' }, out(false))).to.not.have.property('stream')
    expect(loggerOptions({ logLevel: 'info', logFormat: 'json' }, out(true))).to.not.have.property('stream')
    expect(loggerOptions({ logLevel: 'silent', logFormat: 'text' }, out(true))).to.equal(false)
  })

  it('lineLogger: the lines outside fastify in its format, level and stream (JSON, text, below the level dropped)', () => {
    const written: string[] = []
    const out = (isTTY: boolean) => ({ isTTY, write: (t: string) => written.push(t) })
    lineLogger({ logLevel: 'warn', logFormat: 'json' }, out(true))('warn', 'kvlog: retrying', { attempt: 2 })
    lineLogger({ logLevel: 'warn', logFormat: 'json' }, out(false))('info', 'kvlog: m1 leads')
    lineLogger({ logLevel: 'info', logFormat: 'auto' }, out(true))('info', 'kvlog: m1 leads')
    lineLogger({ logLevel: 'silent', logFormat: 'json' }, out(false))('error', 'nothing')
    expect(written).to.have.length(2)
    const json = JSON.parse(written[0]) as Record<string, unknown>
    expect(json).to.include({ level: 40, msg: 'kvlog: retrying', attempt: 2, pid: process.pid })
    expect(json.time).to.match(ISO)
    expect(written[1]).to.match(/^\S+Z INFO {2}kvlog: m1 leads\n$/)
  })

  it('lineLogger writes debug lines at debug and trace only, as logsAt says', () => {
    const written: string[] = []
    const out = { isTTY: false, write: (t: string) => written.push(t) }
    for (const logLevel of ['trace', 'debug', 'info'] as const) {
      lineLogger({ logLevel, logFormat: 'json' }, out)('debug', `kvlog publish: at ${logLevel}`)
      expect(logsAt({ logLevel }, 'debug')).to.equal(logLevel !== 'info')
    }
    expect(written.map((l) => (JSON.parse(l) as { level: number; msg: string }).msg)).to.deep.equal([
      'kvlog publish: at trace',
      'kvlog publish: at debug',
    ])
    expect((JSON.parse(written[0]) as { level: number }).level).to.equal(20)
  })
})
