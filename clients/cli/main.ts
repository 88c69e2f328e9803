/**
 * The `kvlog` command line. Exit codes: 0 ok, 1 error, 2 usage, 3 compacted.
 * Client commands talk to --endpoint (env KVLOG_ENDPOINT, default http://127.0.0.1:8379); every command
 * has --help, and a human form (tables) and a machine form (-o json). `serve` is the server's
 * (apiserver/main.ts) and the offline `snapshot restore`, `import` and `export` are the tools' (tools/main.ts);
 * bin/kvlog dispatches them there, but the help lists them with the rest.
 */
import { CompactedError, KvlogClientError, OutcomeUnknownError, UnreachableError, WrongEndpointError } from '../errors.js'
import { parseArgs, SERVER_SIDE, UsageError, type CommandSpec } from './args.js'
import { compact, cursor, status } from './commands/admin.js'
import { auth, AUTH_USAGE, role, ROLE_USAGE, user, USER_USAGE } from './commands/auth.js'
import { dump } from './commands/dump.js'
import { diff, history, watch } from './commands/events.js'
import { del, get, put, txn } from './commands/kv.js'
import { lease } from './commands/lease.js'
import { revert } from './commands/revert.js'
import { snapshot } from './commands/snapshot.js'
import { completionScript } from './completion.js'
import { context, type Context } from './context.js'
import { commandHelp } from './help.js'

interface Command extends CommandSpec {
  usage: string
  summary: string
  run(c: Context): Promise<number>
}

const RANGE = { prefix: 'bool', 'from-key': 'bool' } as const

const COMMANDS: Record<string, Command> = {
  put: {
    usage: 'put KEY VALUE|- [--lease ID] [--prev-kv] | put KEY --file FILE',
    summary: 'write a key (the value from an argument, stdin or a file)',
    flags: { lease: 'string', 'prev-kv': 'bool', file: 'string' },
    positionals: ['KEY', 'VALUE'],
    min: 1,
    run: put,
  },
  get: {
    usage: 'get KEY [--prefix|--from-key] [--rev REV|TIME] [--limit N] [--keys-only] [--count-only] [--print-value-only]',
    summary: 'read a key or a range',
    flags: { ...RANGE, rev: 'string', limit: 'int', 'keys-only': 'bool', 'count-only': 'bool', 'print-value-only': 'bool' },
    positionals: ['KEY'],
    min: 1,
    run: get,
  },
  del: {
    usage: 'del KEY [--prefix|--from-key] [--prev-kv]',
    summary: 'delete a key or a range',
    flags: { ...RANGE, 'prev-kv': 'bool' },
    positionals: ['KEY'],
    min: 1,
    run: del,
  },
  txn: {
    usage: 'txn [FILE|-]',
    summary: 'run a transaction given as JSON (docs/api.md, POST /v1/txn), from a file or stdin',
    flags: {},
    positionals: ['FILE'],
    min: 0,
    run: txn,
  },
  watch: {
    usage: 'watch KEY [--prefix|--from-key] [--rev REV|TIME | --cursor NAME] [--prev-kv] [--connect-timeout DURATION]',
    summary: 'stream changes; resumes after disconnects; exit 3 when compacted',
    flags: { ...RANGE, rev: 'string', cursor: 'string', 'prev-kv': 'bool', 'connect-timeout': 'string' },
    positionals: ['KEY'],
    min: 1,
    run: watch,
  },
  history: {
    usage: 'history KEY [--prefix|--from-key] [--from REV|TIME] [--to REV|TIME] [--limit N [--newest]]',
    summary: 'what happened to a key or range: revision, time, type, value or JSON diff',
    flags: { ...RANGE, from: 'string', to: 'string', limit: 'int', newest: 'bool' },
    positionals: ['KEY'],
    min: 1,
    run: history,
  },
  diff: {
    usage: 'diff --from REV|TIME [--to REV|TIME|now] [KEY --prefix]',
    summary: 'what changed between two revisions (or times)',
    flags: { from: 'string', to: 'string', prefix: 'bool' },
    positionals: ['KEY'],
    min: 0,
    run: diff,
  },
  compact: {
    usage: 'compact REV|TIME | --keep N [--force]',
    summary: 'remove history below a revision (or keep the last N revisions)',
    flags: { keep: 'int', force: 'bool' },
    positionals: ['REV'],
    min: 0,
    run: compact,
  },
  dump: {
    usage: 'dump --rev REV|TIME | --at TIME [--prefix P] [-o table|json|yaml|ndjson]',
    summary: 'every key of a subtree as it was at a revision or time',
    flags: { rev: 'string', at: 'string', prefix: 'string' },
    positionals: [],
    min: 0,
    outputs: ['yaml', 'ndjson'],
    run: dump,
  },
  revert: {
    usage: 'revert --to-revision REV|TIME | --to-time TIME [--prefix P] [--dry-run]',
    summary: 'put a subtree back to its state at a revision, in one new transaction',
    flags: { 'to-revision': 'string', 'to-time': 'string', prefix: 'string', 'dry-run': 'bool' },
    positionals: [],
    min: 0,
    run: revert,
  },
  status: {
    usage: 'status',
    summary: 'revision, floor, segments, db size, watchers, cursors, alarms',
    flags: {},
    positionals: [],
    min: 0,
    run: status,
  },
  cursor: {
    usage: 'cursor list | commit NAME REV|TIME | delete NAME',
    summary: 'consumer cursors',
    flags: {},
    positionals: ['VERB', 'NAME', 'REV'],
    min: 1,
    run: cursor,
  },
  lease: {
    usage: 'lease grant TTL [--id ID] | revoke ID | list | ttl ID [--keys] | keep-alive ID [--once]',
    summary: 'leases: keys put with --lease ID are deleted when the lease is revoked or expires',
    flags: { id: 'string', keys: 'bool', once: 'bool' },
    positionals: ['VERB', 'ARG'],
    min: 1,
    run: lease,
  },
  snapshot: {
    usage: 'snapshot save FILE | snapshot restore FILE --data-dir DIR [--to-revision REV | --to-time TIME]',
    summary: 'save a consistent, checksummed copy of the database; restore one into a new data dir (offline)',
    flags: { 'data-dir': 'string', 'to-revision': 'string', 'to-time': 'string' },
    positionals: ['VERB', 'FILE'],
    min: 1,
    run: snapshot,
  },
  auth: {
    usage: AUTH_USAGE,
    summary: 'turn authentication on or off (user root with role root must exist), or show it',
    flags: {},
    positionals: ['VERB'],
    min: 1,
    run: auth,
  },
  user: {
    usage: USER_USAGE,
    summary: 'users: add, get, list, delete, passwd, grant-role, revoke-role (as etcdctl)',
    flags: { 'new-user-password': 'string', 'no-password': 'bool' },
    positionals: ['VERB', 'NAME', 'ROLE'],
    min: 1,
    run: user,
  },
  role: {
    usage: ROLE_USAGE,
    summary: 'roles and their key-range permissions (as etcdctl)',
    flags: RANGE,
    positionals: ['VERB', 'ROLE', 'TYPE', 'KEY', 'RANGE_END'],
    min: 1,
    run: role,
  },
  completion: {
    usage: 'completion bash|zsh',
    summary: 'print a shell completion script',
    flags: {},
    positionals: ['SHELL'],
    min: 1,
    run: async (c) => {
      process.stdout.write(completionScript(c.p.args[0], COMMANDS))
      return 0
    },
  },
}

const HELP = `kvlog — a datastore for control planes: an append-only, revisioned log that is the database

Usage: kvlog <command> [flags]

Commands:
  serve      run the server (every setting is a flag; see docs/configuration.md)
  import     --from-etcd ENDPOINTS | --from-etcd-snapshot FILE, --data-dir DIR: a new data dir from etcd, same revisions (offline);
             status|cutover: the lag and the cutover of a server started with --follow-etcd
  export     --etcd-snapshot FILE --data-dir DIR: a stopped server's store as an etcd snapshot file (offline)
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`)
  .join('\n')}
  version    print the version (also --version)

Client flags: --endpoint URL (env KVLOG_ENDPOINT, default http://127.0.0.1:8379; host:port is accepted),
  --endpoints URL,URL,... (env KVLOG_ENDPOINTS: several members, tried in turn), -o table|json (also -w).
Auth flags: --user NAME[:PASSWORD] (env KVLOG_USER; the password also from --password or KVLOG_PASSWORD,
  else asked on the terminal), or --token TOKEN (env KVLOG_TOKEN), when the server has auth enabled.
TLS flags (https:// endpoints): --cacert FILE (a private CA), --cert FILE --key FILE (a client certificate);
  env KVLOG_CACERT, KVLOG_CERT, KVLOG_KEY.
Revisions: wherever a revision is taken, a time is too: 2026-11-22T21:00:00Z, or ago: 10m, 2h, 1d.
Exit codes: 0 ok, 1 error, 2 usage, 3 compacted. "kvlog <command> --help" for a command's flags and examples.`

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  quietOnClosedPipe()
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(HELP + '\n')
    return name === undefined ? 2 : 0
  }
  try {
    if (name === 'serve' || name === 'import' || name === 'export') throw new UsageError(SERVER_SIDE)
    if (name === 'version' || name === '--version' || name === '-V') {
      process.stdout.write(`kvlog ${await version()}\n`)
      return 0
    }
    const command = COMMANDS[name]
    if (command === undefined) throw new UsageError(`unknown command "${name}"\n\n${HELP}`)
    const p = parseArgs(rest, command)
    if (p.flags.get('help') === true || p.flags.get('h') === true) {
      process.stdout.write(commandHelp(name, command.usage, command.summary, Object.keys(command.flags)) + '\n')
      return 0
    }
    return await command.run(await context(p, env, command.outputs))
  } catch (err) {
    return report(name, err)
  }
}

function report(command: string, err: unknown): number {
  const say = (text: string) => process.stderr.write(`kvlog ${command}: ${text}\n`)
  if (err instanceof UsageError) {
    say(`${err.code}: ${err.message}`)
    return 2
  }
  if (err instanceof CompactedError) {
    say(`COMPACTED: ${err.message}`)
    return 3
  }
  if (err instanceof KvlogClientError) say(`${err.code}: ${err.message}`)
  else if (err instanceof WrongEndpointError) say(`${err.code}: ${err.message}`)
  else if (err instanceof UnreachableError || err instanceof OutcomeUnknownError) say(err.message)
  else say(err instanceof Error ? err.message : String(err))
  return 1
}

/**
 * A reader that stops early (`kvlog status | head -1`) closes the pipe: the rest of the output has
 * nowhere to go, so exit at once, quietly and successfully, as Unix tools do.
 */
function quietOnClosedPipe(): void {
  if (process.stdout.listenerCount('error') > 0) return
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0)
    throw err
  })
}

async function version(): Promise<string> {
  const { readFile } = await import('node:fs/promises')
  const pkg = JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
  return pkg.version
}
