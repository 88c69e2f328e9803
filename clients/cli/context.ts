/** What every client command gets: the parsed arguments, a client for the endpoints, and output helpers. */
import { readFile } from 'node:fs/promises'
import type { Credentials } from '../auth.js'
import type { TlsOptions } from '../tls.js'
import { KvlogClient } from '../client.js'
import { parseEndpoints } from '../endpoints.js'
import { outputMode, UsageError, type OutputMode, type Parsed } from './args.js'
import { askSecret } from './secret.js'

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

/**
 * Who the commands act as: --user NAME[:PASSWORD] (else $KVLOG_USER), the password from the flag, else
 * --password, else $KVLOG_PASSWORD, else asked on the terminal; or --token (else $KVLOG_TOKEN), a bearer
 * token as is. None of them: anonymous (what a server with auth disabled expects).
 */
export async function credentials(p: Parsed, env: NodeJS.ProcessEnv): Promise<Credentials | undefined> {
  const userFlag = (p.flags.get('user') as string | undefined) ?? (env.KVLOG_USER || undefined)
  const token = (p.flags.get('token') as string | undefined) ?? (env.KVLOG_TOKEN || undefined)
  if (userFlag === undefined) {
    if (p.flags.has('password')) throw new UsageError('--password needs --user')
    return token === undefined ? undefined : { token }
  }
  if (p.flags.has('token')) throw new UsageError('give --user or --token, not both')
  const colon = userFlag.indexOf(':')
  const user = colon < 0 ? userFlag : userFlag.slice(0, colon)
  if (user === '') throw new UsageError('--user: the user name is empty')
  const password =
    (colon < 0 ? undefined : userFlag.slice(colon + 1)) ??
    (p.flags.get('password') as string | undefined) ??
    (env.KVLOG_PASSWORD !== undefined ? env.KVLOG_PASSWORD : undefined) ??
    (await askSecret(`Password for ${user}: `, `no password for user ${user}: give --user ${user}:PASSWORD, --password or KVLOG_PASSWORD`))
  return { user, password }
}

/**
 * TLS files, as etcdctl's: --cacert (else $KVLOG_CACERT) a PEM bundle of CAs to trust, --cert and --key
 * (else $KVLOG_CERT, $KVLOG_KEY) a client certificate to present; both of the last two or neither.
 */
export async function tlsFiles(p: Parsed, env: NodeJS.ProcessEnv): Promise<TlsOptions | undefined> {
  const path = (name: string, variable: string) => (p.flags.get(name) as string | undefined) ?? (env[variable] || undefined)
  const [cacert, cert, key] = [path('cacert', 'KVLOG_CACERT'), path('cert', 'KVLOG_CERT'), path('key', 'KVLOG_KEY')]
  if ((cert === undefined) !== (key === undefined)) throw new UsageError('give --cert and --key together')
  const read = async (flag: string, file: string | undefined) => {
    if (file === undefined) return undefined
    try {
      return await readFile(file)
    } catch (err) {
      throw new UsageError(
        `--${flag}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
        'BAD_VALUE',
        `--${flag}`,
      )
    }
  }
  const tls: TlsOptions = {}
  const ca = await read('cacert', cacert)
  if (ca !== undefined) tls.ca = ca
  const certificate = await read('cert', cert)
  const privateKey = await read('key', key)
  if (certificate !== undefined && privateKey !== undefined) Object.assign(tls, { cert: certificate, key: privateKey })
  return Object.keys(tls).length > 0 ? tls : undefined
}

export async function context(p: Parsed, env: NodeJS.ProcessEnv, outputs: readonly OutputMode[] = []): Promise<Context> {
  const creds = await credentials(p, env)
  const tls = await tlsFiles(p, env)
  const client = new KvlogClient({
    endpoints: endpointList(p, env),
    ...(creds !== undefined ? { credentials: creds } : {}),
    ...(tls !== undefined ? { tls } : {}),
  })
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
