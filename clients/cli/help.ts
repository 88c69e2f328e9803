/**
 * `kvlog <command> --help`: the usage line, what the command does, every flag with its argument and
 * description, the flags every client command takes, and examples. The command table (main.ts) says
 * which flags exist; this file says what they mean (a test checks that every flag is described).
 */

/** A flag's argument placeholder ('' for a boolean flag) and its description. */
export type FlagHelp = [string, string]

export interface CommandHelp {
  flags: Record<string, FlagHelp>
  examples: string[]
}

const REV_OR_TIME = 'a revision (42), an ISO 8601 time (2026-11-22T21:00:00Z) or a time ago (10m, 2h, 1d)'

const RANGE: Record<string, FlagHelp> = {
  prefix: ['', 'every key that starts with KEY'],
  'from-key': ['', 'every key greater than or equal to KEY'],
}

/** The flags of every client command (args.ts COMMON_FLAGS). */
export const GLOBAL_FLAGS: Record<string, FlagHelp> = {
  endpoint: ['URL', 'the server (env KVLOG_ENDPOINT; default http://127.0.0.1:8379; host:port means http://host:port)'],
  endpoints: ['URL,URL,...', 'several members, tried in turn when one is unreachable or answers 503 (env KVLOG_ENDPOINTS)'],
  user: [
    'NAME[:PASSWORD]',
    'act as this user when the server has auth enabled (env KVLOG_USER; password also from --password or KVLOG_PASSWORD, else asked)',
  ],
  password: ['PASSWORD', "the --user's password (env KVLOG_PASSWORD)"],
  token: ['TOKEN', 'a bearer token instead of --user (env KVLOG_TOKEN)'],
  cacert: ['FILE', 'trust the CA certificates in this PEM file for https:// endpoints (env KVLOG_CACERT)'],
  cert: ['FILE', 'present this client certificate (PEM) to an https:// endpoint; with --key (env KVLOG_CERT)'],
  key: ['FILE', "the client certificate's private key (PEM) (env KVLOG_KEY)"],
  output: ['table|json', 'human tables (default) or JSON (one object per line for streams); also -o, or -w as etcdctl'],
  help: ['', 'this help; also -h'],
}

export const COMMAND_HELP: Record<string, CommandHelp> = {
  put: {
    flags: {
      lease: ['ID', 'attach the key to a lease (decimal, or hex as etcdctl prints it); it goes when the lease does'],
      'prev-kv': ['', 'also print the value the key had before'],
      file: ['FILE', 'take the value from FILE, byte for byte (instead of VALUE)'],
    },
    examples: [
      'kvlog put /config/a hello',
      'kvlog put /config/b - < value.bin      # the value from stdin',
      'kvlog put /config/c --file value.json --prev-kv',
    ],
  },
  get: {
    flags: {
      ...RANGE,
      rev: ['REV|TIME', `read the state at ${REV_OR_TIME}`],
      limit: ['N', 'at most N keys'],
      'keys-only': ['', 'keys and revisions, no values'],
      'count-only': ['', 'only how many keys match'],
      'print-value-only': ['', 'write the value alone, byte for byte, with no newline (for pipes and files)'],
    },
    examples: [
      'kvlog get /config/a',
      'kvlog get /config/ --prefix --keys-only',
      'kvlog get /config/a --rev 1h',
      'kvlog get /config/b --print-value-only > value.bin',
    ],
  },
  del: {
    flags: { ...RANGE, 'prev-kv': ['', 'also print the deleted keys and their values'] },
    examples: ['kvlog del /config/a', 'kvlog del /config/ --prefix --prev-kv'],
  },
  txn: {
    flags: {},
    examples: [
      `echo '{"compare":[{"key":"/a","target":"VERSION","result":"EQUAL","value":0}],"success":[{"type":"put","key":"/a","value":"1"}]}' | kvlog txn`,
      'kvlog txn request.json',
    ],
  },
  watch: {
    flags: {
      ...RANGE,
      rev: ['REV|TIME', `start at ${REV_OR_TIME} (inclusive; default: from now)`],
      cursor: ['NAME', 'start after the revision committed to this consumer cursor'],
      'prev-kv': ['', 'also print the value before each change'],
      'connect-timeout': [
        'DURATION',
        'give up (exit 1) when no endpoint answered within this time, e.g. 30s, 2m (default 30s; 0: never). Once connected, the watch resumes forever',
      ],
    },
    examples: [
      'kvlog watch /config/ --prefix',
      'kvlog watch /config/a --rev 10m --prev-kv',
      'kvlog watch /jobs/ --prefix --cursor worker-1 -o json',
    ],
  },
  history: {
    flags: {
      ...RANGE,
      from: ['REV|TIME', `from ${REV_OR_TIME} (default: the oldest kept)`],
      to: ['REV|TIME', 'up to this revision or time (default: now)'],
      limit: ['N', 'at most N events (the first N; with --newest the last N)'],
      newest: ['', 'with --limit N: the newest N events (still printed oldest first)'],
    },
    examples: [
      'kvlog history /config/a',
      'kvlog history /config/ --prefix --limit 20 --newest   # the last 20 changes',
      'kvlog history /config/ --prefix --from 2h --limit 20',
      'kvlog history /config/a --from 2026-11-22T21:00:00Z -o json',
    ],
  },
  diff: {
    flags: {
      from: ['REV|TIME', `the earlier state: ${REV_OR_TIME}`],
      to: ['REV|TIME|now', 'the later state (default: now)'],
      prefix: ['', 'compare every key under KEY (without KEY: all keys)'],
    },
    examples: ['kvlog diff --from 40 --to 52', 'kvlog diff --from 1h /config/ --prefix    # from an hour ago to now'],
  },
  dump: {
    flags: {
      rev: ['REV|TIME', `the state at ${REV_OR_TIME}`],
      at: ['TIME', 'the state at a time (ISO 8601, or ago: 10m, 2h): the last revision committed at or before it'],
      prefix: ['P', 'only the keys under P (default: every key)'],
    },
    examples: [
      'kvlog dump --rev 1200 --prefix /config/',
      'kvlog dump --at 2h --prefix /registry/configmaps/ -o yaml',
      'kvlog dump --at 2026-11-25T14:02:00Z -o ndjson > state.ndjson',
    ],
  },
  revert: {
    flags: {
      'to-revision': ['REV|TIME', `put the keys back as they were at ${REV_OR_TIME}`],
      'to-time': ['TIME', 'the same at a time (ISO 8601, or ago: 10m, 2h)'],
      prefix: ['P', 'only the keys under P (default: every key)'],
      'dry-run': ['', 'print the changes without writing them'],
    },
    examples: ['kvlog revert --to-revision 1200 --prefix /config/ --dry-run', 'kvlog revert --to-time 10m --prefix /config/'],
  },
  compact: {
    flags: {
      keep: ['N', 'keep the last N revisions of history'],
      force: ['', 'compact even when consumer cursors would expire (without it, kvlog asks on a terminal and refuses otherwise)'],
    },
    examples: ['kvlog compact 1200', 'kvlog compact 7d        # remove history older than a week', 'kvlog compact --keep 10000 --force'],
  },
  status: {
    flags: {},
    examples: ['kvlog status', 'kvlog status -o json', 'kvlog --endpoints 10.0.0.1:8379,10.0.0.2:8379 status'],
  },
  cursor: {
    flags: {},
    examples: ['kvlog cursor list', 'kvlog cursor commit worker-1 1200', 'kvlog cursor delete worker-1'],
  },
  lease: {
    flags: {
      id: ['ID', 'grant: the id to use (decimal or hex); default: the server picks one'],
      keys: ['', 'ttl: also list the keys attached to the lease'],
      once: ['', 'keep-alive: refresh once and exit (default: until interrupted)'],
    },
    examples: [
      'kvlog lease grant 60',
      'kvlog put /locks/a me --lease 694d7b5a1d2c3e0b',
      'kvlog lease keep-alive 694d7b5a1d2c3e0b',
      'kvlog lease ttl 694d7b5a1d2c3e0b --keys',
    ],
  },
  snapshot: {
    flags: {
      'data-dir': ['DIR', 'restore: the new, empty data directory to write'],
      'to-revision': ['REV', 'restore: a store that ends at REV (the later history dropped; new writes continue at REV + 1)'],
      'to-time': ['TIME', 'restore: the same at the last revision committed at or before TIME (RFC 3339)'],
    },
    examples: [
      'kvlog snapshot save backup.snap',
      'kvlog snapshot restore backup.snap --data-dir /var/lib/kvlog-restored',
      'kvlog snapshot restore backup.snap --data-dir ./before --to-revision 41200',
    ],
  },
  user: {
    flags: {
      'new-user-password': ['PW', "add, passwd: the user's password (else NAME:PASSWORD, or asked on the terminal)"],
      'no-password': ['', 'add: a user without a password, who signs in with a client certificate (CN = NAME) only'],
    },
    examples: [
      'kvlog user add root --new-user-password s3cret && kvlog user grant-role root root',
      'kvlog user add alice:pw --user root:s3cret',
      'kvlog user grant-role alice app --user root:s3cret',
      'kvlog user list --user root:s3cret',
    ],
  },
  role: {
    flags: {
      prefix: ['', 'grant-permission, revoke-permission: every key that starts with KEY'],
      'from-key': ['', 'grant-permission, revoke-permission: every key greater than or equal to KEY'],
    },
    examples: [
      'kvlog role add app --user root:s3cret',
      'kvlog role grant-permission app readwrite /app/ --prefix --user root:s3cret',
      'kvlog role get app --user root:s3cret',
    ],
  },
  auth: {
    flags: {},
    examples: ['kvlog auth enable --user root:s3cret', 'kvlog auth status'],
  },
  completion: {
    flags: {},
    examples: ['source <(kvlog completion bash)', 'kvlog completion zsh > "${fpath[1]}/_kvlog"'],
  },
}

function flagLines(flags: Record<string, FlagHelp>): string[] {
  const rows = Object.entries(flags).map(([name, [arg, text]]) => [`--${name}${arg ? ` ${arg}` : ''}`, text])
  const width = Math.max(...rows.map(([f]) => f.length))
  return rows.map(([f, text]) => `  ${f.padEnd(width)}  ${text}`)
}

/** The whole --help text of one command. */
export function commandHelp(name: string, usage: string, summary: string, flagNames: string[]): string {
  const help = COMMAND_HELP[name] ?? { flags: {}, examples: [] }
  const own = Object.fromEntries(flagNames.map((f) => [f, help.flags[f] ?? ['', '']]))
  const lines = [`Usage: kvlog ${usage} [flags]`, '', summary]
  if (flagNames.length > 0) lines.push('', 'Flags:', ...flagLines(own))
  lines.push('', 'Global flags:', ...flagLines(GLOBAL_FLAGS))
  if (help.examples.length > 0) lines.push('', 'Examples:', ...help.examples.map((e) => `  ${e}`))
  return lines.join('\n')
}
