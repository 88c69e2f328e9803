/**
 * The server's commands, as bin/kvlog dispatches them (every other command is the client CLI's,
 * clients/cli/main.ts):
 *
 *   kvlog serve [--config FILE] [--data-dir DIR] [--listen-http HOST:PORT] ...   every config setting is a
 *       flag (docs/configuration.md); SIGTERM or SIGINT drains and exits 0
 *   kvlog snapshot restore FILE --data-dir DIR [-o table|json]                    offline: writes a fresh
 *       data directory from a snapshot file (restore.ts)
 *
 * Exit codes as the client CLI's: 0 ok, 1 error, 2 usage (a bad setting included). Messages start with
 * `kvlog <command>: `. The terminal helpers (progress bar, sizes) come from the caller, so this side of the
 * house draws like the client CLI without importing it.
 */
import { basename } from 'node:path'
import { ConfigError, loadConfig } from '../config/index.js'
import { startServer } from './server.js'
import { restoreFile, type Progress } from './restore.js'

export interface Terminal {
  progressBar(label: string, total: number): Progress
  size(bytes: number): string
}

class UsageError extends Error {
  override readonly name = 'UsageError'
}

const SERVE_HELP = `Usage: kvlog serve [--config FILE] [--data-dir DIR] [--listen-http HOST:PORT] [--ready-file FILE] ...

Runs the server. Defaults: data in ./kvlog-data, HTTP on 127.0.0.1:8379. Every setting can come from a
config file (--config, JSON or YAML), a KVLOG_* environment variable or a flag; docs/configuration.md
lists them all. SIGTERM drains and exits 0.`

const RESTORE_USAGE = 'snapshot restore FILE --data-dir DIR'
const RESTORE_HELP = `Usage: kvlog ${RESTORE_USAGE} [-o table|json]

Offline: writes a fresh data directory (missing or empty) from a snapshot file made by "kvlog snapshot
save", checking its sha256 trailer; on any failure what was written is removed again.`

export async function main(argv: string[], terminal: Terminal): Promise<number> {
  const [name = '', ...rest] = argv
  try {
    if (name === 'serve') {
      if (rest.includes('--help') || rest.includes('-h')) {
        process.stdout.write(SERVE_HELP + '\n')
        return 0
      }
      return await serve(rest)
    }
    if (name === 'snapshot' && rest[0] === 'restore') return await restore(rest.slice(1), terminal)
    throw new UsageError(`not a server command: ${argv.join(' ')}`)
  } catch (err) {
    process.stderr.write(`kvlog ${name}: ${err instanceof Error ? err.message : String(err)}\n`)
    return err instanceof UsageError || err instanceof ConfigError ? 2 : 1
  }
}

async function serve(argv: string[]): Promise<number> {
  const { config, args } = loadConfig({ argv, env: process.env })
  if (args.length > 0) throw new UsageError(`serve takes no arguments, got ${args.join(' ')}`)
  const server = await startServer(config)
  process.stderr.write(`kvlog serving ${server.http} and etcd gRPC on ${server.grpc} (data in ${config.dataDir})\n`)
  await new Promise<void>((resolve) => {
    const stop = () => {
      const timer = setTimeout(() => process.exit(1), config.shutdownTimeout)
      timer.unref()
      void server.close().then(resolve)
    }
    process.once('SIGTERM', stop)
    process.once('SIGINT', stop)
  })
  return 0
}

interface RestoreArgs {
  file?: string
  dataDir?: string
  output: string
  help: boolean
}

/** `FILE --data-dir DIR [-o table|json]`, as the client CLI parses flags (--flag value or --flag=value). */
function parseRestoreArgs(argv: string[]): RestoreArgs {
  const parsed: RestoreArgs = { output: 'table', help: false }
  const positionals: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (!a.startsWith('-') || a === '-') {
      positionals.push(a)
      continue
    }
    const body = a.replace(/^--?/, '')
    const eq = body.indexOf('=')
    const flag = eq >= 0 ? body.slice(0, eq) : body
    if (flag === 'help' || flag === 'h') {
      parsed.help = true
      continue
    }
    if (flag !== 'data-dir' && flag !== 'output' && flag !== 'o' && flag !== 'endpoint') throw new UsageError(`unknown flag ${a.split('=')[0]}`)
    let value = eq >= 0 ? body.slice(eq + 1) : undefined
    if (value === undefined) {
      if (i + 1 >= argv.length) throw new UsageError(`${a} needs a value`)
      value = argv[++i]
    }
    if (flag === 'data-dir') parsed.dataDir = value
    else if (flag !== 'endpoint') parsed.output = value
  }
  if (positionals.length > 1) throw new UsageError(`unexpected argument ${positionals[1]}`)
  parsed.file = positionals[0]
  return parsed
}

async function restore(argv: string[], terminal: Terminal): Promise<number> {
  const a = parseRestoreArgs(argv)
  if (a.help) {
    process.stdout.write(RESTORE_HELP + '\n')
    return 0
  }
  if (a.output !== 'table' && a.output !== 'json') throw new UsageError(`-o: expected table or json, got ${a.output}`)
  if (a.file === undefined || a.file === '') throw new UsageError(`missing FILE: ${RESTORE_USAGE}`)
  if (a.dataDir === undefined || a.dataDir === '') throw new UsageError('snapshot restore needs --data-dir DIR (a new, empty directory)')
  const { file, dataDir } = a
  const r = await restoreFile(file, dataDir, (total) => terminal.progressBar(`restoring ${basename(file)}`, total))
  const line = a.output === 'json'
    ? JSON.stringify({ file, dataDir, records: r.records, bytes: r.bytes, sha256: r.sha256 })
    : `restored ${file} into ${dataDir}: ${r.records} records, ${r.bytes} bytes (${terminal.size(r.bytes)}), sha256 ${r.sha256}`
  process.stdout.write(line + '\n')
  return 0
}
