/**
 * The `kvlog` command line. Exit codes: 0 ok, 1 error, 2 usage, 3 compacted.
 */
import { ConfigError } from '../../config/index.js'

const HELP = `kvlog — a datastore for control planes: an append-only, revisioned log that is the database

Usage: kvlog <command> [flags]

Commands:
  serve      run the server (every setting is a flag; see docs/configuration.md)
  version    print the version

Run "kvlog <command> --help" for a command's flags.`

const SERVE_HELP = `Usage: kvlog serve [--config FILE] [--data-dir DIR] [--listen-http HOST:PORT] [--ready-file FILE] ...

Runs the server. Defaults: data in ./kvlog-data, HTTP on 127.0.0.1:8379. Every setting can come from a
config file (--config, JSON or YAML), a KVLOG_* environment variable or a flag; docs/configuration.md
lists them all. SIGTERM drains and exits 0.`

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(HELP + '\n')
    return command === undefined ? 2 : 0
  }
  try {
    switch (command) {
      case 'serve': {
        if (rest.includes('--help') || rest.includes('-h')) {
          process.stdout.write(SERVE_HELP + '\n')
          return 0
        }
        const { serve } = await import('./serve.js')
        return await serve(rest)
      }
      case 'version':
        process.stdout.write(`kvlog ${await version()}\n`)
        return 0
      default:
        process.stderr.write(`kvlog: unknown command "${command}"\n\n${HELP}\n`)
        return 2
    }
  } catch (err) {
    if (err instanceof ConfigError || (err instanceof Error && err.name === 'UsageError')) {
      process.stderr.write(`kvlog ${command}: ${err.message}\n`)
      return 2
    }
    process.stderr.write(`kvlog ${command}: ${err instanceof Error ? err.message : String(err)}\n`)
    return 1
  }
}

async function version(): Promise<string> {
  const { readFile } = await import('node:fs/promises')
  const pkg = JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
  return pkg.version
}
