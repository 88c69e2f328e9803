/**
 * Keeps README.md from drifting: its "Try it" shell block is run line by line against a real `kvlog serve`
 * (the block's own server start is replaced by this test's server on free loopback ports), and the two
 * set-up commands at the top must be the ones package.json and .ci/run use.
 */
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'

const REPO = fileURLToPath(new URL('../../../', import.meta.url))

/** The first ```sh block after the line `marker`, as command lines (comments and blank lines dropped). */
function shellBlockAfter(readme: string, marker: string): string[] {
  const start = `\n${readme}`.indexOf(`\n${marker}\n`)
  expect(start, `README has a line "${marker}"`).to.be.greaterThan(-1)
  const open = readme.indexOf('```sh\n', start)
  const close = readme.indexOf('\n```', open + 6)
  return readme
    .slice(open + 6, close)
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
}

interface Ran {
  code: number | null
  stdout: string
  stderr: string
}

function sh(command: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', command], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

describe('README', function () {
  this.timeout(40_000)
  let readme: string
  let server: ServerProcess | undefined

  before(async () => {
    readme = await readFile(`${REPO}README.md`, 'utf8')
  })
  after(async () => {
    await server?.cleanup()
  })

  it('names the set-up commands package.json and .ci/run use', async () => {
    const setup = shellBlockAfter(readme, '# kvlog')
    expect(setup[0]).to.equal('npm ci && npm start')
    const pkg = JSON.parse(await readFile(`${REPO}package.json`, 'utf8')) as { scripts: Record<string, string> }
    expect(pkg.scripts.start).to.match(/bin\/kvlog serve$/)
    const ci = await readFile(`${REPO}.ci/run`, 'utf8')
    expect(ci).to.match(/^npm ci\b/m)
    expect(ci).to.match(/^npm test$/m)
    // The README's package list is the one CI always installs. kubectl is expected on the machine (the
    // kubectl tests need 1.32); CI falls back to Debian's kubernetes-client only where none is present.
    const test = setup[1]!
    expect(test).to.match(/&& npm ci && npm test$/)
    const readmePackages = /apt-get install -y (.*?) &&/.exec(test)![1]!.split(' ').sort()
    const ciPackages = new Set<string>()
    for (const m of ci.matchAll(/^as_root apt-get install -y --no-install-recommends (.*)$/gm)) {
      for (const p of m[1]!.split(' ')) ciPackages.add(p)
    }
    expect(readmePackages).to.deep.equal([...ciPackages].sort())
  })

  it('runs every command of "Try it" against a real server', async () => {
    const lines = shellBlockAfter(readme, 'Try it:')
    expect(lines[0], 'the block starts the server').to.match(/^\.\/bin\/kvlog serve &$/)
    server = await startServerProcess()
    const httpPort = new URL(server.http).port
    const grpcPort = server.grpc.split(':').at(-1)!
    const env = { ...process.env, KVLOG_ENDPOINTS: server.http, ETCDCTL_API: '3' }
    for (const line of lines.slice(1)) {
      const command = line.replaceAll(':8379', `:${httpPort}`).replaceAll(':2379', `:${grpcPort}`)
      expect(command, 'every command targets the server under test or the default endpoint').to.not.match(/:(8379|2379)\b/)
      const ran = await sh(command, env, 15_000)
      // A streaming watch is stopped by curl's --max-time (exit 28) once it has shown what it streams.
      const streaming = /--max-time/.test(command)
      if (streaming) {
        expect(ran.code, `${line}\n${ran.stderr}`).to.equal(28)
        expect(ran.stdout, line).to.contain('"type":"created"')
      } else {
        expect(ran.code, `${line}\n${ran.stdout}\n${ran.stderr}`).to.equal(0)
      }
    }
  })
})
