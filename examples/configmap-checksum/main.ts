/**
 * Runs the checksum controller (controller.ts) until SIGTERM or SIGINT:
 *
 *   node dist/examples/configmap-checksum/main.js [--endpoint http://127.0.0.1:8379] [--namespace default]
 *
 * Prints one JSON line when its caches are synced ({"ready":true}), and reconcile errors to stderr.
 */
import { parseArgs } from 'node:util'
import { ChecksumController } from './controller.js'

const { values } = parseArgs({
  options: {
    endpoint: { type: 'string', default: process.env.KVLOG_ENDPOINT ?? 'http://127.0.0.1:8379' },
    namespace: { type: 'string' },
    workers: { type: 'string', default: '2' },
    'resync-seconds': { type: 'string', default: '0' },
  },
})

const controller = new ChecksumController({
  endpoint: values.endpoint,
  namespace: values.namespace,
  workers: Number(values.workers),
  resyncPeriodMs: Number(values['resync-seconds']) * 1000,
  onError: (key, err) => process.stderr.write(`reconcile ${key}: ${String((err as Error).message ?? err)}\n`),
})

let stopping = false
async function shutdown(): Promise<void> {
  if (stopping) return
  stopping = true
  await controller.stop()
  process.exit(0)
}
process.on('SIGTERM', () => void shutdown())
process.on('SIGINT', () => void shutdown())

await controller.start()
process.stdout.write(JSON.stringify({ ready: true }) + '\n')
