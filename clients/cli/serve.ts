/**
 * `kvlog serve [--config FILE] [--data-dir DIR] [--listen-http HOST:PORT] ...`: every config setting is a
 * flag (docs/configuration.md). The only CLI command that loads the server side (apiserver/).
 */
import { loadConfig } from '../../config/index.js'
import { startServer } from '../../apiserver/server.js'
import { UsageError } from './args.js'

export async function serve(argv: string[]): Promise<number> {
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

