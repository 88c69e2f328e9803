/**
 * kvlog auth|user|role and the auth flags of every client command, against a real `kvlog serve`: users,
 * roles and permissions (key, --prefix, --from-key, a range) set up and read back in table and JSON form,
 * auth enabled, then `--user NAME:PASSWORD`, `--user` with `--password`, KVLOG_USER/KVLOG_PASSWORD, the
 * hidden prompt on a terminal (a pty from script(1)), no password without a terminal, wrong passwords
 * and denied keys; `history` and `watch` as a user; the client library renewing an expired token by
 * itself; revoking, passwd, deleting and disabling auth.
 */
import { spawn } from 'node:child_process'
import { expect } from 'chai'
import { KvlogClient } from '../../../clients/index.js'
import { KVLOG_BIN, startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { sleep } from '../../support/wait.js'
import { kvlog, kvlogInProcess, watchProcess, type Run } from '../run-cli.js'

/** Runs a command on a pseudo-terminal (script(1)), typing `answer` once `prompt` appears. */
function onTerminal(args: string[], endpoint: string, prompt: string, answer: string): Promise<Run> {
  const command = [process.execPath, KVLOG_BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ')
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    env: { ...process.env, KVLOG_ENDPOINT: endpoint },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stdout = ''
  let typed = false
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString()
    if (!typed && stdout.includes(prompt)) {
      typed = true
      child.stdin.write(`${answer}\r`)
    }
  })
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr: '' })))
}

describe('kvlog auth, user, role and --user (real server)', function () {
  this.timeout(90_000)
  let server: ServerProcess
  let ep: string
  const run = (...args: string[]) => kvlogInProcess(args, ep)
  const root = (...args: string[]) => run(...args, '--user', 'root:rootpw')

  before(async () => {
    server = await startServerProcess(['--auth-password-hash-cost', '10', '--auth-token-ttl', '2s'])
    ep = server.http
  })

  after(async () => {
    await server?.stop()
    await server?.cleanup()
  })

  it('sets up users, roles and permissions, and reads them back (table and JSON)', async () => {
    expect((await run('user', 'add', 'root:rootpw')).stdout).to.equal('User root created\n')
    expect((await run('user', 'add', 'alice', '--new-user-password', 'apw')).stdout).to.equal('User alice created\n')
    expect((await run('user', 'add', 'bob:bpw')).code).to.equal(0)
    expect((await run('user', 'add', 'certonly', '--no-password')).code).to.equal(0)
    const dup = await run('user', 'add', 'alice:x')
    expect([dup.code, dup.stderr]).to.deep.equal([1, 'kvlog user: ALREADY_EXISTS: user name already exists\n'])
    expect((await run('role', 'add', 'app')).stdout).to.equal('Role app created\n')
    expect((await run('role', 'grant-permission', 'app', 'readwrite', 'app/', '--prefix')).stdout).to.equal('Role app updated\n')
    expect((await run('role', 'grant-permission', 'app', 'read', 'cfg')).code).to.equal(0)
    expect((await run('role', 'grant-permission', 'app', 'write', 'z', '--from-key')).code).to.equal(0)
    expect((await run('role', 'grant-permission', 'app', 'read', 'm', 'n')).code).to.equal(0)
    const bad = await run('role', 'grant-permission', 'app', 'execute', 'x')
    expect(bad.code).to.equal(2)
    expect((await run('role', 'grant-permission', 'nope', 'read', 'x')).stderr).to.contain('FAILED_PRECONDITION')
    const table = (await run('role', 'get', 'app')).stdout.split('\n').map((l) => l.trimEnd())
    expect(table).to.deep.equal([
      'Role app',
      'TYPE       KEY   RANGE END',
      'READWRITE  app/  app0',
      'READ       cfg',
      'READ       m     n',
      'WRITE      z     <open ended>',
      '',
    ])
    const role = JSON.parse((await run('role', 'get', 'app', '-o', 'json')).stdout) as { permissions: unknown[] }
    expect(role.permissions).to.deep.equal([
      { type: 'READWRITE', key: 'app/', rangeEnd: 'app0' },
      { type: 'READ', key: 'cfg' },
      { type: 'READ', key: 'm', rangeEnd: 'n' },
      { type: 'WRITE', key: 'z', rangeEnd: '\u0000' },
    ])
    expect((await run('user', 'grant-role', 'alice', 'app')).stdout).to.equal('Role app is granted to user alice\n')
    expect((await run('user', 'grant-role', 'root', 'root')).code).to.equal(0)
    expect(JSON.parse((await run('user', 'get', 'alice', '-o', 'json')).stdout)).to.deep.equal({ name: 'alice', roles: ['app'] })
    expect((await run('user', 'list')).stdout).to.equal('USER\nalice\nbob\ncertonly\nroot\n')
    expect(JSON.parse((await run('role', 'list', '-o', 'json')).stdout)).to.deep.equal(['app'])
    expect((await run('put', 'app/a', 'before')).code).to.equal(0)
  })

  it('auth enable: anonymous requests are refused, users act within their permissions', async () => {
    expect((await run('auth', 'enable')).stdout).to.equal('Authentication Enabled\n')
    expect(JSON.parse((await run('auth', 'status', '-o', 'json')).stdout)).to.include({ enabled: true })
    const anon = await run('get', 'app/a')
    expect([anon.code, anon.stderr.split(':')[1]?.trim()]).to.deep.equal([1, 'UNAUTHENTICATED'])
    expect((await run('put', 'app/a', 'v1', '--user', 'alice:apw')).code).to.equal(0)
    expect((await run('get', 'app/a', '--print-value-only', '--user', 'alice', '--password', 'apw')).stdout).to.equal('v1')
    const env = await kvlog(['get', 'app/a', '--print-value-only'], { endpoint: ep, env: { KVLOG_USER: 'alice', KVLOG_PASSWORD: 'apw' } })
    expect(env.stdout).to.equal('v1')
    const denied = await run('put', 'cfg', 'x', '--user', 'alice:apw')
    expect([denied.code, denied.stderr]).to.deep.equal([1, 'kvlog put: PERMISSION_DENIED: permission denied\n'])
    const wrong = await run('get', 'app/a', '--user', 'alice:nope')
    expect(wrong.stderr).to.contain('UNAUTHENTICATED')
    expect((await run('user', 'list', '--user', 'alice:apw')).stderr).to.contain('PERMISSION_DENIED')
    expect((await run('user', 'get', 'alice', '--user', 'alice:apw')).stdout).to.equal('USER   ROLES\nalice  app\n')
    expect((await root('user', 'list', '-o', 'json')).stdout).to.equal('["alice","bob","certonly","root"]\n')
    expect((await run('get', 'app/a', '--token', 'not-a-token')).stderr).to.contain('UNAUTHENTICATED')
  })

  it('asks for a missing password on a terminal without echoing it, and refuses without a terminal', async () => {
    const asked = await onTerminal(['get', 'app/a', '--print-value-only', '--user', 'alice'], ep, 'Password for alice: ', 'apw')
    expect(asked.code).to.equal(0)
    expect(asked.stdout).to.contain('v1')
    expect(asked.stdout).not.to.contain('apw')
    const piped = await kvlog(['get', 'app/a', '--user', 'alice'], { endpoint: ep, input: 'apw\n' })
    expect(piped.code).to.equal(2)
    expect(piped.stderr).to.contain('no terminal to ask on')
  })

  it('history and watch authenticate; history shows who wrote', async () => {
    const h = await run('history', 'app/a', '--user', 'alice:apw')
    expect(h.code).to.equal(0)
    expect(h.stdout).to.contain('alice@http')
    expect((await run('history', 'secret', '--user', 'alice:apw')).stderr).to.contain('PERMISSION_DENIED')
    // Watched from the revision after `before`: the live write is seen however long the watch takes
    // to start (its login and first request may come after the write on a busy machine).
    const { revision } = await new KvlogClient({ endpoint: ep, credentials: { user: 'alice', password: 'apw' } }).put('app/w', 'before')
    const w = watchProcess(['app/', '--prefix', '-o', 'json', '--rev', String(revision + 1), '--user', 'alice:apw'], ep)
    try {
      await run('put', 'app/w', 'live', '--user', 'alice:apw')
      const lines = await w.waitLines(1, 20_000)
      expect(lines[0]).to.contain('live')
    } finally {
      await w.stop()
    }
    const denied = await kvlog(['watch', 'secret', '--user', 'alice:apw'], { endpoint: ep })
    expect(denied.code).to.equal(1)
    expect(denied.stderr).to.contain('PERMISSION_DENIED')
  })

  it('the client library authenticates again when its token has expired', async () => {
    const kv = new KvlogClient({ endpoint: ep, credentials: { user: 'alice', password: 'apw' } })
    await kv.put('app/t', '1')
    await sleep(3000) // the server's token TTL is 2 s
    await kv.put('app/t', '2') // a write refused with 401 was not applied: sent again with a new token
    expect((await kv.get('app/t'))?.value.toString()).to.equal('2')
    expect((await kv.history('app/t')).events.map((e) => e.kv.value.toString())).to.deep.equal(['1', '2'])
  })

  it('revoke, passwd, delete and auth disable', async () => {
    expect((await root('role', 'revoke-permission', 'app', 'app/', '--prefix')).stdout).to.equal(
      'Permission of app/ is revoked from role app\n',
    )
    expect((await run('get', 'app/a', '--user', 'alice:apw')).stderr).to.contain('PERMISSION_DENIED')
    expect((await root('role', 'revoke-permission', 'app', 'app/', '--prefix')).stderr).to.contain('FAILED_PRECONDITION')
    expect((await root('user', 'passwd', 'alice', '--new-user-password', 'newpw')).stdout).to.equal('Password updated\n')
    expect((await run('get', 'cfg', '--user', 'alice:apw')).stderr).to.contain('UNAUTHENTICATED')
    expect((await run('get', 'cfg', '--user', 'alice:newpw')).code).to.equal(0)
    expect((await root('user', 'revoke-role', 'alice', 'app')).stdout).to.equal('Role app is revoked from user alice\n')
    expect((await root('user', 'delete', 'bob')).stdout).to.equal('User bob deleted\n')
    expect((await root('role', 'delete', 'app')).stdout).to.equal('Role app deleted\n')
    expect((await run('auth', 'disable', '--user', 'alice:newpw')).stderr).to.contain('PERMISSION_DENIED')
    expect((await root('auth', 'disable')).stdout).to.equal('Authentication Disabled\n')
    // With auth disabled a --user is fine (as etcdctl), and so is no user.
    expect((await run('get', 'app/a', '--print-value-only', '--user', 'alice:newpw')).stdout).to.equal('v1')
    expect((await run('get', 'app/a', '--print-value-only')).stdout).to.equal('v1')
    expect((await run('auth', 'status')).stdout).to.equal(
      'enabled        false\nauth revision  ' + String(JSON.parse((await run('auth', 'status', '-o', 'json')).stdout).authRevision) + '\n',
    )
  })
})
