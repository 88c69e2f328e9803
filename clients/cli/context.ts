/** What every client command gets: the parsed arguments, a client for the endpoints, and output helpers. */
import { KvlogClient } from '../client.js'
import { parseEndpoints } from '../endpoints.js'
import { outputMode, UsageError, type OutputMode, type Parsed } from './args.js'

export interface Context {
  p: Parsed
  client: KvlogClient
  mode: OutputMode
  out(line: string): void
}

export const DEFAULT_ENDPOINT = 'http://127.0.0.1:8379'

/**
 * The members to talk to: --endpoints a,b,c or --endpoint URL (not both), else $KVLOG_ENDPOINTS, else
 * $KVLOG_ENDPOINT, else the default. `host:port` means http://host:port.
 */
export function endpointList(p: Parsed, env: NodeJS.ProcessEnv): string[] {
  const one = p.flags.get('endpoint') as string | undefined
  const many = p.flags.get('endpoints') as string | undefined
  if (one !== undefined && many !== undefined) throw new UsageError('give --endpoint or --endpoints, not both')
  const list = many ?? one ?? (env.KVLOG_ENDPOINTS || undefined) ?? (env.KVLOG_ENDPOINT || undefined) ?? DEFAULT_ENDPOINT
  try {
    return parseEndpoints(list)
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}

export function context(p: Parsed, env: NodeJS.ProcessEnv, outputs: readonly OutputMode[] = []): Context {
  const client = new KvlogClient({ endpoints: endpointList(p, env) })
  return { p, client, mode: outputMode(p, outputs), out: (line) => process.stdout.write(line + '\n') }
}

export const str = (c: Context, name: string) => c.p.flags.get(name) as string | undefined
export const int = (c: Context, name: string) => c.p.flags.get(name) as number | undefined
export const bool = (c: Context, name: string) => c.p.flags.get(name) === true

/** The key range of an optional --prefix P: that prefix, or every key. */
export function prefixRange(prefix: string | undefined): { key: string; range: { prefix?: boolean; fromKey?: boolean } } {
  if (prefix === undefined || prefix === '') return { key: '\0', range: { fromKey: true } }
  return { key: prefix, range: { prefix: true } }
}
