/**
 * Debian's etcdctl (3.4) driving etcd's auth API against a real etcd 3.4 and kvlog: users, roles,
 * permissions over a key, a prefix, a [key, end) range and --from-key (read, write, readwrite), enabling
 * auth, then puts, gets, watches and txns as a permitted and a denied user, wrong passwords, --user with
 * and without a password (on stdin), revoking, changing a password and disabling auth. Every step is
 * recorded (ids normalized, revisions exact) and kvlog's transcript must equal etcd's step by step; a few
 * steps also check their exact output, so that both servers misbehaving alike fails too.
 */
import { expect } from 'chai'
import { settlesWithin, sleep } from '../../support/wait.js'
import { linesOf } from './etcdctl-kv-cases.js'
import { diffTranscripts, EtcdctlSession, type Step } from './etcdctl-session.js'
import { targets, type Started } from './targets.js'

const transcripts = new Map<string, Step[]>()
const DENIED = 'Error: etcdserver: permission denied'
const NO_USER = 'Error: etcdserver: user name is empty'
const BAD_LOGIN = 'Error: etcdserver: authentication failed, invalid user ID or password'

const as = (user: string, ...args: string[]) => ['--user', user, ...args]

async function setUp(s: EtcdctlSession): Promise<void> {
  s.check(await s.ok('put', 'a', '1'), 'OK\n', 'put a') // rev 2
  s.check(await s.ok('put', 'foo/x', '2'), 'OK\n', 'put foo/x') // rev 3
  s.check(
    (await s.run(['user', 'add', '', '--new-user-password=x'])).error,
    'Error: etcdserver: user name is empty',
    'user add with an empty name',
  )
  s.check(await s.ok('user', 'add', 'root', '--new-user-password=rootpw'), 'User root created\n', 'user add root')
  s.check(
    (await s.run(['user', 'add', 'root', '--new-user-password=x'])).error,
    'Error: etcdserver: user name already exists',
    'duplicate user',
  )
  await s.ok('user', 'add', 'alice', '--new-user-password=apw')
  await s.ok('user', 'add', 'bob', '--new-user-password=bpw')
  s.check(await s.ok('role', 'add', 'r1'), 'Role r1 created\n', 'role add')
  s.check((await s.run(['role', 'add', 'r1'])).error, 'Error: etcdserver: role name already exists', 'duplicate role')
  await s.ok('role', 'add', 'r2')
  s.check(await s.ok('role', 'grant-permission', 'r1', 'read', 'foo/x'), 'Role r1 updated\n', 'grant read on a key')
  await s.ok('role', 'grant-permission', 'r1', 'readwrite', '--prefix', 'foo/')
  await s.ok('role', 'grant-permission', 'r1', 'write', '--from-key', 'z')
  await s.ok('role', 'grant-permission', 'r1', 'write', 'a', 'b')
  await s.ok('role', 'grant-permission', 'r1', 'read', 'a', 'b') // the same range again: the type is replaced
  await s.ok('role', 'grant-permission', 'r2', 'read', 'k')
  s.check(
    (await s.run(['role', 'grant-permission', 'nope', 'read', 'a'])).error,
    'Error: etcdserver: role name not found',
    'grant to an unknown role',
  )
  s.check(
    await s.ok('role', 'get', 'r1'),
    'Role r1\nKV Read:\n\t[a, b) (prefix a)\n\t[foo/, foo0) (prefix foo/)\n\tfoo/x\nKV Write:\n\t[foo/, foo0) (prefix foo/)\n\t[z, <open ended>\n',
    'role get',
  )
  await s.run(['role', 'get', 'r1', '-w', 'json'])
  await s.ok('role', 'list')
  s.check(await s.ok('user', 'grant-role', 'alice', 'r1'), 'Role r1 is granted to user alice\n', 'user grant-role')
  await s.ok('user', 'grant-role', 'bob', 'r2')
  s.check((await s.run(['user', 'grant-role', 'alice', 'nope'])).error, 'Error: etcdserver: role name not found', 'grant an unknown role')
  s.check((await s.run(['user', 'grant-role', 'nope', 'r1'])).error, 'Error: etcdserver: user name not found', 'grant to an unknown user')
  await s.ok('user', 'get', 'alice')
  await s.ok('user', 'get', 'alice', '--detail')
  s.check(await s.ok('user', 'list'), 'alice\nbob\nroot\n', 'user list')
}

async function enable(s: EtcdctlSession): Promise<void> {
  // etcdctl adds role root and grants it to root when the server says root lacks it, then enables.
  s.check(await s.ok('auth', 'enable'), 'Authentication Enabled\n', 'auth enable')
  s.check((await s.run(['get', 'a'])).error, NO_USER, 'a get without a user')
  s.check((await s.run(['user', 'list'])).error, NO_USER, 'user list without a user')
  s.check(await s.ok(...as('root:rootpw', 'role', 'list')), 'r1\nr2\nroot\n', 'role list as root')
  await s.ok(...as('root:rootpw', 'user', 'get', 'root'))
}

async function asUsers(s: EtcdctlSession): Promise<void> {
  s.check(await s.ok(...as('alice:apw', 'get', 'foo/x')), 'foo/x\n2\n', 'read a permitted key')
  s.check(await s.ok(...as('alice:apw', 'get', 'a')), 'a\n1\n', 'read in [a, b)')
  s.check((await s.run(as('alice:apw', 'put', 'a', '2'))).error, DENIED, 'write where only read is granted')
  s.check((await s.run(as('alice:wrong', 'get', 'foo/x'))).error, BAD_LOGIN, 'wrong password')
  s.check((await s.run(as('nobody:x', 'get', 'foo/x'))).error, BAD_LOGIN, 'unknown user')
  s.check(await s.ok(...as('alice:apw', 'put', 'foo/y', '3')), 'OK\n', 'write in the prefix') // rev 4
  s.check(await s.ok(...as('alice:apw', 'put', 'zz', '3')), 'OK\n', 'write --from-key') // rev 5
  s.check((await s.run(as('alice:apw', 'get', 'zz'))).error, DENIED, 'read where only write is granted')
  s.check(await s.ok(...as('alice:apw', 'get', '--prefix', 'foo/')), 'foo/x\n2\nfoo/y\n3\n', 'read the prefix')
  s.check((await s.run(as('alice:apw', 'get', '--prefix', 'fo'))).error, DENIED, 'a range only partly permitted')
  s.check((await s.run(as('alice:apw', 'get', '--from-key', 'z'))).error, DENIED, 'get --from-key without read')
  s.check((await s.run(as('alice:apw', 'del', 'a'))).error, DENIED, 'delete without write')
  s.check((await s.run(as('alice:apw', 'put', 'foo/z', '1', '--prev-kv'))).code, 0, 'put --prev-kv with readwrite') // rev 6
  s.check((await s.run(as('bob:bpw', 'get', 'foo/x'))).error, DENIED, 'another user')
  s.check(await s.ok(...as('bob:bpw', 'get', 'k')), '', 'bob reads k (absent)')
  s.check((await s.run(as('alice:apw', 'user', 'list'))).error, DENIED, 'user list needs root')
  s.check(await s.ok(...as('alice:apw', 'user', 'get', 'alice')), 'User: alice\nRoles: r1\n', 'a user reads itself')
  s.check((await s.run(as('alice:apw', 'user', 'get', 'bob'))).error, DENIED, 'a user reads another')
  await s.ok(...as('alice:apw', 'role', 'get', 'r1'))
  s.check((await s.run(as('alice:apw', 'role', 'get', 'r2'))).error, DENIED, 'a role the user does not hold')
  // A password on stdin when --user has none (etcdctl asks for it).
  s.check((await s.run(as('alice', 'get', 'foo/x'), { input: 'apw\n' })).code, 0, '--user without a password, typed in')
  s.check((await s.run(as('alice', 'get', 'foo/x'), { input: 'nope\n' })).error, BAD_LOGIN, '--user without a password, wrong one typed')
  s.check((await s.run(['--user', 'alice', '--password', 'apw', 'get', 'foo/x'])).code, 0, '--password')
  // etcd 3.4 checks no permission for Compact: a user without role root, or no user at all, may compact.
  s.check(await s.ok(...as('bob:bpw', 'compaction', '2')), 'compacted revision 2\n', 'compaction as a user without role root')
  s.check(await s.ok('compaction', '3'), 'compacted revision 3\n', 'compaction without a user')
}

async function txns(s: EtcdctlSession): Promise<void> {
  const txn = (user: string, input: string) => s.run(as(user, 'txn'), { input })
  s.check((await txn('alice:apw', 'value("foo/x") = "2"\n\nput foo/t 1\n\nget a\n\n')).out, 'SUCCESS\n\nOK\n', 'txn within permissions') // rev 7
  s.check((await txn('alice:apw', 'value("k") = "1"\n\nput foo/t 2\n\n\n')).error, DENIED, 'txn whose compare reads a forbidden key')
  s.check(
    (await txn('alice:apw', 'value("foo/x") = "2"\n\nput foo/t 3\n\nput k 1\n\n')).error,
    DENIED,
    'txn whose failure branch writes a forbidden key',
  )
  s.check((await txn('alice:apw', 'value("foo/x") = "2"\n\nget --prefix f\n\n\n')).error, DENIED, 'txn reading a partly forbidden range')
  s.check((await txn('bob:bpw', 'value("k") = "1"\n\nget k\n\nget k\n\n')).out, 'FAILURE\n\n', 'txn within read permissions')
  await s.ok('--user', 'alice:apw', 'get', '--prefix', 'foo/t')
}

async function watches(s: EtcdctlSession): Promise<void> {
  const rev = ((await s.json('--user', 'root:rootpw', 'get', 'foo/', '--keys-only')).header as { revision?: number } | undefined)?.revision
  const w = s.spawn('--user', 'alice:apw', 'watch', '--prefix', 'foo/', `--rev=${String(rev)}`)
  try {
    await sleep(300)
    await s.ok(...as('alice:apw', 'put', 'foo/w', 'live'))
    s.record('watch --prefix foo/ as alice', await linesOf(s, w, 6, 'permitted watch'))
  } finally {
    await w.stop('SIGKILL')
  }
  for (const [user, args] of [
    ['alice:apw', ['a', 'c']],
    ['alice:apw', ['--prefix', 'f']],
    ['bob:bpw', ['foo/x']],
  ] as const) {
    const d = s.spawn('--user', user, 'watch', ...args)
    // etcdctl exits once the server cancels the watch; its login may wait for a busy core first.
    const code = await settlesWithin('etcdctl watch to end on a denied watch', d.exited, 90_000).catch(() => 'timeout')
    await d.stop('SIGKILL')
    const said = d
      .stderr()
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('{'))
    s.check(
      said,
      [
        'watch was canceled (rpc error: code = PermissionDenied desc = etcdserver: permission denied)',
        'Error: watch is canceled by the server',
      ],
      `denied watch ${args.join(' ')}`,
    )
    s.record(`watch ${args.join(' ')} as ${user} (stderr)`, said, typeof code === 'number' ? code : null)
  }
}

async function revokeAndDisable(s: EtcdctlSession): Promise<void> {
  const root = (...args: string[]) => as('root:rootpw', ...args)
  s.check((await s.run(['user', 'passwd', 'alice', '--interactive=false'], { input: 'newpw\n' })).error, NO_USER, 'passwd without a user')
  s.check(
    await s.run(root('user', 'passwd', 'alice', '--interactive=false'), { input: 'newpw\n' }).then((r) => r.out),
    'Password updated\n',
    'user passwd',
  )
  s.check((await s.run(as('alice:apw', 'get', 'foo/x'))).error, BAD_LOGIN, 'the old password')
  s.check(await s.ok(...as('alice:newpw', 'get', 'foo/x')), 'foo/x\n2\n', 'the new password')
  s.check(
    await s.ok(...root('role', 'revoke-permission', 'r1', 'foo/x')),
    'Permission of key foo/x is revoked from role r1\n',
    'revoke a key',
  )
  s.check(
    (await s.run(root('role', 'revoke-permission', 'r1', 'foo/x'))).error,
    'Error: etcdserver: permission is not granted to the role',
    'revoke it again',
  )
  s.check(
    await s.ok(...root('role', 'revoke-permission', 'r1', '--prefix', 'foo/')),
    'Permission of range [foo/, foo0) is revoked from role r1\n',
    'revoke a prefix',
  )
  s.check((await s.run(as('alice:newpw', 'get', 'foo/x'))).error, DENIED, 'revoked at once')
  await s.ok(...root('role', 'revoke-permission', 'r1', '--from-key', 'z'))
  await s.ok(...root('role', 'get', 'r1'))
  s.check(await s.ok(...root('user', 'revoke-role', 'alice', 'r1')), 'Role r1 is revoked from user alice\n', 'user revoke-role')
  s.check(
    (await s.run(root('user', 'revoke-role', 'alice', 'r1'))).error,
    'Error: etcdserver: role is not granted to the user',
    'revoke-role again',
  )
  s.check(
    (await s.run(root('user', 'revoke-role', 'root', 'root'))).error,
    'Error: etcdserver: invalid auth management',
    'root keeps role root',
  )
  s.check((await s.run(root('user', 'delete', 'root'))).error, 'Error: etcdserver: invalid auth management', 'root stays')
  s.check((await s.run(root('role', 'delete', 'root'))).error, 'Error: etcdserver: invalid auth management', 'role root stays')
  s.check(await s.ok(...root('role', 'delete', 'r2')), 'Role r2 deleted\n', 'role delete')
  await s.ok(...root('user', 'get', 'bob'))
  s.check((await s.run(as('bob:bpw', 'auth', 'disable'))).error, DENIED, 'auth disable needs root')
  s.check(await s.ok(...root('auth', 'disable')), 'Authentication Disabled\n', 'auth disable')
  s.check(await s.ok('get', 'foo/x'), 'foo/x\n2\n', 'anyone reads again')
  s.check(await s.ok(...as('alice:newpw', 'get', 'foo/x')), 'foo/x\n2\n', 'a --user is fine with auth disabled')
  s.check(await s.ok('user', 'delete', 'bob'), 'User bob deleted\n', 'user delete')
  s.check((await s.run(['user', 'delete', 'bob'])).error, 'Error: etcdserver: user name not found', 'user delete again')
  s.check(await s.ok('user', 'list'), 'alice\nroot\n', 'user list at the end')
  s.check(await s.ok('get', '--prefix', ''), 'a\n1\nfoo/t\n1\nfoo/w\nlive\nfoo/x\n2\nfoo/y\n3\nfoo/z\n1\nzz\n3\n', 'the data, all there')
}

describe('etcdctl auth compatibility (etcd 3.4 and kvlog)', function () {
  this.timeout(120_000)

  for (const target of targets) {
    describe(target.name, () => {
      let store: Started
      let session: EtcdctlSession

      before(async () => {
        store = await target.start()
        session = new EtcdctlSession(store.endpoint)
        transcripts.set(target.name, session.transcript)
      })

      after(async () => {
        await store?.stop()
      })

      const steps: Array<[string, (s: EtcdctlSession) => Promise<void>]> = [
        ['users, roles and permissions (key, --prefix, --from-key, range; read, write, readwrite)', setUp],
        ['auth enable: requests without a user are refused', enable],
        ['gets and puts as a permitted and a denied user, wrong passwords, --user without a password', asUsers],
        ['txns: compares and both branches are checked', txns],
        ['watches: a permitted one sees events, denied ones are canceled', watches],
        ['passwd, revoke-permission, revoke-role, root protected, auth disable: nothing lost', revokeAndDisable],
      ]
      for (const [title, run] of steps) {
        it(title, async () => {
          await run(session)
          const failures = session.takeFailures()
          if (failures.length > 0) expect.fail(`${failures.length} difference(s):\n  ${failures.join('\n  ')}`)
        })
      }
    })
  }

  describe('identical results', () => {
    it('kvlog printed exactly what etcd printed, step by step (ids normalized)', () => {
      const reference = transcripts.get('etcd') ?? []
      const actual = transcripts.get('kvlog') ?? []
      expect(reference.length, 'etcd transcript steps').to.be.above(60)
      const diffs = diffTranscripts(reference, actual)
      if (diffs.length > 0) expect.fail(`${diffs.length} of ${reference.length} steps differ:\n${diffs.join('\n')}`)
    })
  })
})
