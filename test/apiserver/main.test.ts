/**
 * The server process as an operator meets it: `serve --help`, a second server on a data directory another one holds is
 * refused with a message naming the holder's PID (exit 1, the first keeps serving), and SIGTERM to
 * `npm start` stops the server too (no process left behind).
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect } from 'chai'
import { SCHEMA, SETTINGS } from '../../config/index.js'
import { ESSENTIALS } from '../../config/essentials.js'
import { KVLOG_BIN, startServerProcess, type ServerProcess } from '../support/server-process.js'
import { sleep } from '../support/wait.js'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('kvlog serve: the process (real processes)', function () {
  this.timeout(60_000)
  let server: ServerProcess | undefined
  let tmp: string

  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'kvlog-main-'))
  })

  afterEach(async () => {
    await server?.cleanup()
    server = undefined
    await rm(tmp, { recursive: true, force: true })
  })

  it("a second server on the same data dir exits 1 naming the first one's PID; the first keeps serving", async () => {
    const dir = join(tmp, 'data')
    server = await startServerProcess([], dir)
    const second = spawnSync(
      process.execPath,
      [KVLOG_BIN, 'serve', '--data-dir', dir, '--listen-http', '127.0.0.1:0', '--listen-grpc', '127.0.0.1:0'],
      { encoding: 'utf8', timeout: 30_000 },
    )
    expect(second.status).to.equal(1)
    expect(second.stderr.trim()).to.equal(
      `kvlog serve: the data directory ${dir} is in use by another process (PID ${server.child.pid}): ` +
        'one kvlog server per data directory. Stop that server, or give this one its own --data-dir',
    )
    expect((await fetch(`${server.http}/readyz`)).status).to.equal(200)
  })

  it('serve --help shows the essentials on one screen, each on one line, and no tuning setting', () => {
    const r = spawnSync(process.execPath, [KVLOG_BIN, 'serve', '--help'], { encoding: 'utf8' })
    expect(r.status).to.equal(0)
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines.length).to.be.at.most(40)
    for (const line of lines) expect(line.length, line).to.be.at.most(100)
    for (const group of ESSENTIALS) {
      expect(lines, group.title).to.include(`${group.title}:`)
      for (const [key] of group.settings)
        expect(lines.filter((l) => l.startsWith(`  ${SCHEMA[key].flag} `) || l === `  ${SCHEMA[key].flag}`)).to.have.length(1)
    }
    const essentials = ESSENTIALS.flatMap((g) => g.settings.map(([key]) => key))
    for (const essential of [
      'dataDir',
      'listenHttp',
      'listenGrpc',
      'tlsCertFile',
      'authToken',
      'natsUrl',
      'autoCompactionMode',
      'quotaBackendBytes',
    ] as const)
      expect(essentials).to.include(essential)
    for (const tuning of SETTINGS.filter((s) => !essentials.includes(s.key))) expect(r.stdout).not.to.contain(`${tuning.flag} `)
    expect(r.stdout).to.contain('--help-all')
  })

  it('serve --help-all describes every setting as a flag, with its default and environment variable, and gives examples', () => {
    const r = spawnSync(process.execPath, [KVLOG_BIN, 'serve', '--help-all'], { encoding: 'utf8' })
    expect(r.status).to.equal(0)
    for (const x of SETTINGS) expect(r.stdout, x.flag).to.match(new RegExp(`^  ${x.flag} \\S+ +\\S.*\\(default .*; env ${x.env}\\)$`, 'm'))
    expect(r.stdout).to.contain('\nExamples:\n  kvlog serve')
  })

  it('SIGTERM to `npm start` stops the server: no process is left', async () => {
    const dir = join(tmp, 'data')
    const readyFile = join(tmp, 'ready.json')
    const npm = spawn(
      'npm',
      [
        'start',
        '--silent',
        '--',
        '--data-dir',
        dir,
        '--listen-http',
        '127.0.0.1:0',
        '--listen-grpc',
        '127.0.0.1:0',
        '--ready-file',
        readyFile,
        '--log-level',
        'warn',
      ],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stderr = ''
    npm.stderr.on('data', (d) => (stderr += d))
    const exited = new Promise<number | string>((resolve) => npm.on('exit', (code, signal) => resolve(code ?? signal ?? -1)))
    let pid: number | undefined
    try {
      const deadline = Date.now() + 30_000
      while (pid === undefined) {
        expect(Date.now(), `npm start did not get ready: ${stderr}`).to.be.below(deadline)
        expect(npm.exitCode, stderr).to.equal(null)
        try {
          pid = (JSON.parse(await readFile(readyFile, 'utf8')) as { pid: number }).pid
        } catch {
          await sleep(50)
        }
      }
      expect(pid).to.not.equal(npm.pid)
      npm.kill('SIGTERM')
      await exited
      const gone = Date.now() + 10_000
      while (alive(pid) && Date.now() < gone) await sleep(50)
      expect(alive(pid), `the server (PID ${pid}) outlived npm start`).to.equal(false)
    } finally {
      if (pid !== undefined && alive(pid)) process.kill(pid, 'SIGKILL')
      if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL')
    }
  })
})
