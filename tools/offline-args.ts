/** The offline tools' flags, through the binary's one parser (config/args.ts). */
import { parseCommandLine, UsageError, type FlagSpec } from '../config/args.js'
import type { Progress } from './restore.js'

export interface Terminal {
  progressBar(label: string, total: number): Progress
  /** Progress in counted units with a rate and an ETA (e.g. revisions). */
  rateBar(label: string, total: number, unit: string): Progress
  size(bytes: number): string
}

export interface OfflineArgs {
  positionals: string[]
  dataDir?: string
  fromEtcd?: string
  toRevision?: string
  toTime?: string
  /** Towards the source etcd, as etcdctl's flags. */
  access: { cacert?: string; cert?: string; key?: string; user?: string }
  timeout?: string
  /** The server to ask (import status/cutover); the other offline commands ignore it. */
  endpoint?: string
  /** The other `extra` flags, by name. */
  flags: Record<string, string>
  output: string
  help: boolean
}

/**
 * The offline commands' flags (--data-dir, -o/--output, and `extra`) through the binary's one parser.
 * --endpoint is accepted everywhere (KVLOG_ENDPOINT habits); only import status/cutover use it.
 */
export function parseOfflineArgs(argv: string[], extra: readonly string[] = []): OfflineArgs {
  const names = ['data-dir', 'output', 'o', 'endpoint', ...extra]
  const specs: Record<string, FlagSpec> = { help: { type: 'boolean' }, h: { type: 'boolean' } }
  for (const name of names) specs[name] = { type: 'string' }
  const line = parseCommandLine(argv, specs)
  const parsed: OfflineArgs = { positionals: line.positionals, access: {}, flags: {}, output: 'table', help: false }
  for (const { name, value } of line.flags) {
    if (name === 'help' || name === 'h') parsed.help = value !== 'false' && value !== false
    else if (typeof value !== 'string')
      continue // only help and h are booleans
    else if (name === 'data-dir') parsed.dataDir = value
    else if (name === 'from-etcd') parsed.fromEtcd = value
    else if (name === 'to-revision') parsed.toRevision = value
    else if (name === 'to-time') parsed.toTime = value
    else if (name === 'timeout') parsed.timeout = value
    else if (name === 'cacert' || name === 'cert' || name === 'key' || name === 'user') parsed.access[name] = value
    else if (name === 'endpoint') parsed.endpoint = value
    else if (extra.includes(name)) parsed.flags[name] = value
    else parsed.output = value
  }
  return parsed
}

/** -o table|json, the tools' two output forms. */
export function tableOrJson(a: OfflineArgs): 'table' | 'json' {
  if (a.output !== 'table' && a.output !== 'json') throw new UsageError(`-o: expected table or json, got ${a.output}`, 'BAD_VALUE', '-o')
  return a.output
}
