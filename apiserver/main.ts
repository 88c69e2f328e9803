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
import { ConfigError, loadConfig, type Config } from '../config/index.js'
import { serveHelp, serveHelpAll } from '../config/serve-help.js'
import { isKvlogError } from '../log/index.js'
import { explainOpenFailure } from './data-dir-lock.js'
import { exposureMessage, exposures } from './exposure-warnings.js'
import { looseKeyFiles, narrowDataDir, usePrivateUmask } from './file-modes.js'
import { lineLogger } from './logging.js'
import { startServer } from './server.js'
import { uiEnabled } from './ui-assets.js'

export async function main(argv: string[]): Promise<number> {
  // Every file a server command creates is the server user's alone (file-modes.ts).
  usePrivateUmask()
  const [name = '', ...rest] = argv
  try {
    if (name !== 'serve') throw new UsageError(`not a server command: ${argv.join(' ')}`)
    if (rest.includes('--help-all')) {
      process.stdout.write(serveHelpAll() + '\n')
      return 0
    }
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

/**
 * Node's process warnings (the server's own emitWarning calls, deprecations) go to the log in its format
 * instead of Node's plain-text `(node:PID) Warning: ...` lines on stderr.
 */
function logWarnings(config: Config): void {
  const say = lineLogger(config)
  process.removeAllListeners('warning')
  process.on('warning', (w: Error & { code?: string }) =>
    say('warn', w.message, { warning: w.name, ...(w.code !== undefined ? { code: w.code } : {}) }),
  )
}

async function serve(argv: string[]): Promise<number> {
  const { config, args } = loadConfig({ argv, env: process.env })
  if (args.length > 0) throw new UsageError(`serve takes no arguments, got ${args.join(' ')}`, 'BAD_ARGUMENTS')
  logWarnings(config)
  const widerMode = await narrowDataDir(config.dataDir)
  const server = await startServer(config).catch(async (err: unknown) => {
    throw await explainOpenFailure(err, config.dataDir)
  })
  const { logger } = server
  if (widerMode !== undefined)
    logger.warn(
      { dataDir: config.dataDir, was: `0${widerMode.toString(8)}`, now: '0700' },
      'data directory was readable by others; narrowed to 0700',
    )
  for (const k of await looseKeyFiles(config))
    logger.warn({ setting: k.setting, file: k.file, mode: k.mode }, 'private key file is readable by group or others; chmod 600 it')
  for (const e of exposures(config, server.authEnabled()))
    logger.warn({ listener: e.listener, address: e.address, without: e.without }, exposureMessage(e))
  const ui = uiEnabled(config.ui, config.listenHttp) ? { ui: `${server.http}/ui/` } : {}
  logger.info(
    { http: server.http, grpc: server.grpc, ...ui, dataDir: config.dataDir, pid: process.pid, version: await version() },
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
