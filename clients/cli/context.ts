/** What every client command gets: the parsed arguments, a client for --endpoint, and output helpers. */
import { KvlogClient } from '../client.js'
import { outputMode, type Parsed } from './args.js'

export interface Context {
  p: Parsed
  client: KvlogClient
  mode: 'table' | 'json'
  out(line: string): void
}

export function context(p: Parsed, env: NodeJS.ProcessEnv): Context {
  const endpoint = (p.flags.get('endpoint') as string | undefined) ?? env.KVLOG_ENDPOINT ?? 'http://127.0.0.1:8379'
  return { p, client: new KvlogClient({ endpoint }), mode: outputMode(p), out: (line) => process.stdout.write(line + '\n') }
}

export const str = (c: Context, name: string) => c.p.flags.get(name) as string | undefined
export const int = (c: Context, name: string) => c.p.flags.get(name) as number | undefined
export const bool = (c: Context, name: string) => c.p.flags.get(name) === true
