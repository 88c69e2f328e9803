/**
 * `kvlog serve --help` (the essentials, config/essentials.ts, one line each, on one screen) and
 * `--help-all` (every setting with its full description, default and variable), from the config schema.
 */
import { ESSENTIALS, isEssential } from './essentials.js'
import { formatDefault } from './print-docs.js'
import { SCHEMA, SETTINGS, type Setting } from './schema.js'

const INTRO = `Runs the server. Every setting can come from a config file (--config FILE, JSON or YAML), a
KVLOG_* environment variable or a flag (flags win); docs/configuration.md lists them too. SIGTERM or
SIGINT drains and exits 0. SIGHUP reads the TLS certificate, key and CA files again.`

const EXAMPLES = `Examples:
  kvlog serve
  kvlog serve --data-dir /var/lib/kvlog --listen-http 0.0.0.0:8379 --listen-grpc 0.0.0.0:2379
  kvlog serve --config /etc/kvlog/kvlog.yaml --log-format text
  npm start -- --data-dir ./data`

/** What a flag's value looks like, for the short help: "--listen-http HOST:PORT". */
function placeholder(s: Setting): string {
  if (s.type === 'boolean') return ''
  if (s.type === 'address') return ' HOST:PORT'
  if (s.type === 'bytes') return ' SIZE'
  if (s.type === 'duration') return ' DURATION'
  if (s.type === 'integer') return ' N'
  const values = (s.values ?? []).join('|')
  if (s.type === 'enum') return values.length <= 16 ? ` ${values}` : s.key.endsWith('Level') ? ' LEVEL' : ' MODE'
  if (s.key.endsWith('File')) return ' FILE'
  if (s.key.endsWith('Dir')) return ' DIR'
  if (/Urls?$/.test(s.key)) return ' URLS'
  if (s.key.endsWith('Name')) return ' NAME'
  return ' VALUE'
}

const FLAG_WIDTH = 38

/** The essentials by group, one line each, then where the rest is. */
export function serveHelp(): string {
  const groups = ESSENTIALS.map(({ title, settings }) => {
    const lines = settings.map(([key, summary]) => {
      const s = SCHEMA[key] as Setting
      const d = formatDefault(s)
      const flag = `  ${s.flag}${placeholder(s)}`
      return `${flag.padEnd(FLAG_WIDTH)}${summary}${d === '""' || s.type === 'boolean' ? '' : ` [${d}]`}`
    })
    return `${title}:\n${lines.join('\n')}`
  })
  const tuning = SETTINGS.filter((s) => !isEssential(s.key)).length
  return `Usage: kvlog serve [flags]

${INTRO}

The settings most servers set (defaults in brackets):
${groups.join('\n')}

"kvlog serve --help-all" lists every setting, with the ${tuning} that tune the store, compaction, the
watches, the doors and the cluster engine.`
}

/** Every setting as a flag with its description and default: the essentials first, then the tuning. */
export function serveHelpAll(): string {
  const ordered = [...SETTINGS.filter((s) => isEssential(s.key)), ...SETTINGS.filter((s) => !isEssential(s.key))]
  const rows = ordered.map((x) => [
    `${x.flag} ${x.type === 'boolean' ? 'true|false' : x.type === 'enum' ? (x.values ?? []).join('|') : x.type.toUpperCase()}`,
    `${x.description} (default ${formatDefault(x)}; env ${x.env})`,
  ])
  const width = Math.min(48, Math.max(...rows.map(([f]) => f.length)))
  return `Usage: kvlog serve [flags]

${INTRO}

Flags:
  --config FILE${' '.repeat(Math.max(2, width - 11))}a JSON or YAML file of settings (keys as below, e.g. dataDir)
${rows.map(([f, d]) => `  ${f.padEnd(width)}  ${d}`).join('\n')}

${EXAMPLES}`
}
