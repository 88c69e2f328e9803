/**
 * Renders docs/configuration.md from the schema, so the docs cannot drift from the code
 * (test/config/schema.test.ts compares the committed file with this output). To regenerate:
 *
 *     npx tsc -p tsconfig.json && node dist/config/print-docs.js > docs/configuration.md
 */
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { formatBytes, formatDuration } from './parse-values.js'
import { ESSENTIALS, isEssential } from './essentials.js'
import { SCHEMA, SETTINGS, type Setting } from './schema.js'

/** A setting's default as the docs show it (and as a flag would accept it): "64MiB", "10s", '""'. */
export function formatDefault(setting: Setting): string {
  const value = setting.default
  if (setting.type === 'bytes') return formatBytes(value as number)
  if (setting.type === 'duration') return formatDuration(value as number)
  if (value === '') return '""'
  return String(value)
}

function formatBound(setting: Setting, value: number): string {
  if (setting.type === 'bytes') return formatBytes(value)
  if (setting.type === 'duration') return formatDuration(value)
  return String(value)
}

/** "integer, 1 to 100000", "bytes, at least 1KiB", "enum: `always`, `never`". */
function formatType(setting: Setting): string {
  if (setting.type === 'enum') return `enum: ${(setting.values ?? []).map((v) => `\`${v}\``).join(', ')}`
  if (setting.nonEmpty === true) return `${setting.type}, non-empty`
  const { min, max } = setting
  if (min !== undefined && max !== undefined) return `${setting.type}, ${formatBound(setting, min)} to ${formatBound(setting, max)}`
  if (min !== undefined) return `${setting.type}, at least ${formatBound(setting, min)}`
  if (max !== undefined) return `${setting.type}, at most ${formatBound(setting, max)}`
  return setting.type
}

const cell = (text: string): string => text.replace(/\|/g, '\\|')

function renderTable(settings: readonly Setting[]): string {
  const rows = settings.map((s) =>
    [s.key, `\`${s.flag}\``, `\`${s.env}\``, formatType(s), `\`${formatDefault(s)}\``, s.description].map(cell).join(' | '),
  )
  return [
    '| Setting | Flag | Environment | Type | Default | Description |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r} |`),
  ].join('\n')
}

/** The whole of docs/configuration.md. */
export function renderConfigDocs(): string {
  return `<!-- Generated from config/schema.ts by config/print-docs.ts; do not edit by hand. -->
# Configuration

Every setting of a kvlog server has a default, and can be set in a config file, in the environment and
with a command-line flag. A later source overrides an earlier one:

    defaults  <  config file  <  KVLOG_* environment variables  <  command-line flags

Every problem stops the server at startup with an error naming the setting and where the value came
from, for example \`invalid value for --max-txn-ops (flag): "abc" is not an integer\` or
\`maxTxnOps (env KVLOG_MAX_TXN_OPS) must be between 1 and 100000, got 0\`. Unknown flags, unknown keys in
the config file and unknown \`KVLOG_*\` environment variables are errors too, not silently ignored: every
\`KVLOG_\` name is reserved for the settings below and \`KVLOG_CONFIG\`. Each mistake has a stable code
(\`UNKNOWN_FLAG\`, \`MISSING_VALUE\`, \`BAD_VALUE\`, \`BAD_SETTING\`: [errors.md](errors.md#command-line-errors))
and exits with code 2.

## Sources

**Config file.** \`--config FILE\` (or \`KVLOG_CONFIG=FILE\`; the flag wins; an empty path means no file)
names a JSON or YAML file: \`.json\` is read as JSON, \`.yaml\` and \`.yml\` as YAML, anything else as JSON
if it parses, else as YAML. It holds one mapping from setting to value. Keys are the camelCase setting
names; the flag names without dashes are accepted too. An empty file sets nothing.

\`\`\`yaml
dataDir: /var/lib/kvlog
fsync: always
maxRequestBytes: 1.5MiB
listenGrpc: "[::]:2379"      # quote values that start with [ in YAML
watchProgressInterval: 10s
\`\`\`

Relative paths in the file (such as \`dataDir\`) are relative to the server's working directory, not to
the file.

**Environment.** \`KVLOG_\` and the setting name in SCREAMING_SNAKE_CASE, e.g.
\`KVLOG_MAX_TXN_OPS=256\`. An empty value is an empty string, which only string settings accept.

**Flags.** \`--flag value\` or \`--flag=value\`; if a flag is given twice the last one wins. A flag's
value is never taken from an argument that starts with \`--\` (write \`--data-dir=--odd\` for that).
Boolean settings are set with \`--flag\`, \`--flag=true\`, \`--flag=false\` or \`--no-flag\`, and never take
the next argument. Arguments that are not flags (the command and its operands) are passed through in
order; \`--\` ends the flags, and everything after it is passed through as is.

## Value formats

| Type | Accepts | Examples |
|---|---|---|
| integer | decimal digits, optionally signed | \`128\`, \`-1\` |
| boolean | \`true\`/\`false\`, \`1\`/\`0\`, \`yes\`/\`no\`, any case | \`--no-flag\`, \`KVLOG_X=yes\` |
| bytes | a number of bytes, or a number with a unit: \`B\`, \`KiB\`, \`MiB\`, \`GiB\`, \`TiB\` (powers of 1024; \`Ki\`, \`Mi\`, \`Gi\`, \`Ti\` too) or \`KB\`, \`MB\`, \`GB\`, \`TB\` (powers of 1000), any case. The result must be a whole number of bytes. A bare \`K\`, \`M\` or \`G\` is rejected as ambiguous. | \`1048576\`, \`512KiB\`, \`1.5MiB\`, \`2GiB\`, \`10MB\` |
| duration | a number of milliseconds, or one or more number-unit parts with units \`ms\`, \`s\`, \`m\`, \`h\`. The result must be a whole number of milliseconds. | \`1500\`, \`500ms\`, \`10s\`, \`1.5s\`, \`5m\`, \`1h30m\` |
| address | \`HOST:PORT\` with a hostname or IPv4 address, or \`[IPv6]:PORT\`; port 0 to 65535, 0 meaning any free port | \`127.0.0.1:2379\`, \`localhost:8379\`, \`0.0.0.0:2379\`, \`[::1]:2379\` |
| enum | one of the listed values, exactly | \`info\` |
| string | any text | \`./kvlog-data\` |

In a JSON or YAML file, integers, bytes and durations may also be written as plain numbers (bytes and
milliseconds), and booleans as \`true\`/\`false\`. Ranges are inclusive.

## Settings

The settings most servers set come first, by group, as \`kvlog serve --help\` shows them; the rest tune
the store, compaction, the watches, the doors and the cluster engine (\`kvlog serve --help-all\` lists
them all).

### Essentials

${ESSENTIALS.map((g) => `**${g.title}**\n\n${renderTable(g.settings.map(([key]) => SCHEMA[key] as Setting))}`).join('\n\n')}

### Tuning

${renderTable(SETTINGS.filter((s) => !isEssential(s.key)))}
`
}

/** True when this module is the script node was started with. */
function isMain(): boolean {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)
  } catch {
    return false
  }
}

// `node dist/config/print-docs.js` prints the docs.
if (isMain()) process.stdout.write(renderConfigDocs())
