/**
 * Files only the server's user may read (apiserver/file-modes.ts), with real `kvlog serve` processes and
 * CLI runs started under umask 022, the usual default that made the data dir 0755 and its files 0644:
 * the data dir is 0700 and everything in it 0600, `kvlog snapshot save`, `snapshot restore` and `kvlog export` write 0600, a
 * data dir made earlier with 0755 is narrowed, and a JWT private key others may read is warned about
 * while the server starts. A listener beyond loopback without TLS or auth is warned about too.
 */
import { generateKeyPairSync } from 'node:crypto'
import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { kvlog, jsonLines } from '../clients/run-cli.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'

const mode = async (path: string) => (await stat(path)).mode & 0o777

/** Every path under dir with its mode, directories included. */
async function modes(dir: string): Promise<Map<string, number>> {
  const out = new Map<string, number>()
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name)
    out.set(path, await mode(path))
  }
  return out
}

/** The warn lines of a server's JSON log with this message. */
function warnings(server: ServerProcess, msg: RegExp): Array<Record<string, unknown>> {
  return jsonLines(server.stdout()).filter((l) => l.level === 40 && typeof l.msg === 'string' && msg.test(l.msg))
}

describe('security: file modes', function () {
  this.timeout(60_000)
  let umask: number
  let tmp: string
  const servers: ServerProcess[] = []

  before(async () => {
    umask = process.umask(0o022)
    tmp = await mkdtemp(join(tmpdir(), 'kvlog-modes-'))
  })
  after(async () => {
    for (const s of servers) await s.cleanup()
    process.umask(umask)
    await rm(tmp, { recursive: true, force: true })
  })

  const serve = async (args: string[], dir?: string) => {
    const s = await startServerProcess(args, dir)
    servers.push(s)
    return s
  }

  it('a new data dir is 0700 and every file LevelDB writes in it 0600; snapshot save, restore and export write 0600', async () => {
    const dir = join(tmp, 'data')
    const server = await serve([], dir)
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${server.http}/v1/kv`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key: `secret/${i}`, value: 'x'.repeat(1000) }),
      })
      expect(res.status).to.equal(200)
    }
    const file = join(tmp, 'snap.db')
    const saved = await kvlog(['snapshot', 'save', file], { endpoint: server.http })
    expect(saved.code, saved.stderr).to.equal(0)
    expect(await mode(file)).to.equal(0o600)
    await server.stop()

    expect(await mode(dir)).to.equal(0o700)
    const inside = await modes(dir)
    expect(inside.size).to.be.greaterThan(2)
    for (const [path, m] of inside) expect(m.toString(8), path).to.be.oneOf(['600', '700'])

    const restored = join(tmp, 'restored')
    const restore = await kvlog(['snapshot', 'restore', file, '--data-dir', restored])
    expect(restore.code, restore.stderr).to.equal(0)
    expect(await mode(restored)).to.equal(0o700)
    for (const [path, m] of await modes(restored)) expect(m.toString(8), path).to.be.oneOf(['600', '700'])

    const exported = join(tmp, 'etcd.db')
    const ran = await kvlog(['export', '--etcd-snapshot', exported, '--data-dir', dir])
    expect(ran.code, ran.stderr).to.equal(0)
    expect(await mode(exported)).to.equal(0o600)
  })

  it('narrows a data dir made 0755 before to 0700, with a warning', async () => {
    const dir = join(tmp, 'old')
    await mkdir(dir)
    await chmod(dir, 0o755)
    const server = await serve([], dir)
    expect(await mode(dir)).to.equal(0o700)
    expect(warnings(server, /narrowed to 0700/)).to.have.length(1)
  })

  it('warns about a JWT private key others may read (0644) and starts; a 0600 one gets no warning', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' })
    const loose = join(tmp, 'loose.pem')
    const tight = join(tmp, 'tight.pem')
    await writeFile(loose, pem, { mode: 0o644 })
    await writeFile(tight, pem, { mode: 0o600 })
    const a = await serve(['--auth-token', `jwt,sign-method=ES256,priv-key=${loose}`])
    expect(warnings(a, /private key file is readable by group or others/).map((l) => [l.setting, l.file, l.mode])).to.deep.equal([
      ['authToken priv-key', loose, '0644'],
    ])
    const b = await serve(['--auth-token', `jwt,sign-method=ES256,priv-key=${tight}`])
    expect(warnings(b, /private key file/)).to.deep.equal([])
  })

  it('warns when a listener is beyond loopback without TLS and auth, and not on loopback', async () => {
    const open = await serve(['--listen-http', '0.0.0.0:0', '--listen-grpc', '0.0.0.0:0'])
    // The lines may reach the pipe after the ready file: wait for both (a hang fails, a slow machine not).
    const deadline = Date.now() + 30_000
    while (warnings(open, /beyond loopback/).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    const lines = warnings(open, /beyond loopback/)
    expect(lines.map((l) => [l.listener, l.without])).to.deep.equal([
      ['listenHttp', ['TLS', 'auth']],
      ['listenGrpc', ['TLS', 'auth']],
    ])
    const local = await serve([])
    expect(warnings(local, /beyond loopback/)).to.deep.equal([])
  })
})
