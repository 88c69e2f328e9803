/**
 * `kvlog serve`, as bin/kvlog dispatches it (the offline tools are tools/main.ts; every other command is
 * the client CLI's, clients/cli/main.ts):
 *
 *   kvlog serve [--config FILE] [--data-dir DIR] [--listen-http HOST:PORT] ...   every config setting is a
 *       flag (docs/configuration.md); SIGTERM or SIGINT drains and exits 0; SIGHUP reloads the TLS files
 *
 * Exit codes as the client CLI's: 0 ok, 1 error, 2 usage (a bad setting included), 3 COMPACTED. Messages
 * start with `kvlog serve: ` and a stable code.
 */
import { readFile } from 'node:fs/promises'
import { UsageError } from '../config/args.js'
import { ConfigError, loadConfig, SETTINGS } from '../config/index.js'
import { isKvlogError } from '../log/index.js'
import { formatDefault } from '../config/print-docs.js'
import { explainOpenFailure } from './data-dir-lock.js'
import { startServer } from './server.js'

/** `kvlog serve --help`: every setting as a flag with its description and default, from the config schema. */
function serveHelp(): string {
  const rows = SETTINGS.map((x) => [
    `${x.flag} ${x.type === 'boolean' ? 'true|false' : x.type === 'enum' ? (x.values ?? []).join('|') : x.type.toUpperCase()}`,
    `${x.description} (default ${formatDefault(x)}; env ${x.env})`,
  ])
  const width = Math.min(48, Math.max(...rows.map(([f]) => f.length)))
  return `Usage: kvlog serve [flags]

Runs the server. Defaults: data in ./kvlog-data, HTTP on 127.0.0.1:8379, etcd gRPC on 127.0.0.1:2379.
Every setting can come from a config file (--config FILE, JSON or YAML), a KVLOG_* environment variable
or a flag (flags win); docs/configuration.md lists them too. SIGTERM or SIGINT drains and exits 0.
SIGHUP reads the TLS certificate, key and CA files again (new connections get them).

Flags:
  --config FILE${' '.repeat(Math.max(2, width - 11))}a JSON or YAML file of settings (keys as below, e.g. dataDir)
${rows.map(([f, d]) => `  ${f.padEnd(width)}  ${d}`).join('\n')}

Examples:
  kvlog serve
  kvlog serve --data-dir /var/lib/kvlog --listen-http 0.0.0.0:8379 --listen-grpc 0.0.0.0:2379
  kvlog serve --config /etc/kvlog/kvlog.yaml --log-format text
  npm start -- --data-dir ./data`
}

export async function main(argv: string[]): Promise<number> {
  const [name = '', ...rest] = argv
  try {
    if (name !== 'serve') throw new UsageError(`not a server command: ${argv.join(' ')}`)
    if (rest.includes('--help') || rest.includes('-h')) {
      process.stdout.write(serveHelp() + '\n')
      return 0
    }
    return await serve(rest)
  } catch (err) {
    // As the client CLI reports: a stable code before the message, exit 2 for usage and 3 for COMPACTED.
    const usage = err instanceof UsageError || err instanceof ConfigError
    const code = isKvlogError(err) || usage ? `${err.code}: ` : ''
    process.stderr.write(`kvlog ${name}: ${code}${err instanceof Error ? err.message : String(err)}\n`)
    if (isKvlogError(err) && err.code === 'COMPACTED') return 3
    return usage ? 2 : 1
  }
}

async function serve(argv: string[]): Promise<number> {
  const { config, args } = loadConfig({ argv, env: process.env })
  if (args.length > 0) throw new UsageError(`serve takes no arguments, got ${args.join(' ')}`, 'BAD_ARGUMENTS')
  const server = await startServer(config).catch(async (err: unknown) => {
    throw await explainOpenFailure(err, config.dataDir)
  })
  const { logger } = server
  logger.info(
    { http: server.http, grpc: server.grpc, dataDir: config.dataDir, pid: process.pid, version: await version() },
    'kvlog serving',
  )
  const reload = () => void server.reloadTls()
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      logger.info({ signal }, 'kvlog stopping')
      const timer = setTimeout(() => {
        logger.error({ shutdownTimeout: config.shutdownTimeout }, 'kvlog did not stop in time; exiting')
        process.exit(1)
      }, config.shutdownTimeout)
      timer.unref()
      void server.close().then(resolve)
    }
    process.once('SIGTERM', stop)
    process.once('SIGINT', stop)
    process.on('SIGHUP', reload)
  })
  process.off('SIGHUP', reload)
  logger.info({ http: server.http, grpc: server.grpc }, 'kvlog stopped')
  return 0
}

async function version(): Promise<string> {
  const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  return pkg.version
}
