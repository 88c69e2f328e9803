/**
 * Command-line parsing for the client commands: `--flag value`, `--flag=value`, boolean `--flag`, and
 * positionals. Unknown flags, missing values and bad numbers are usage errors (exit code 2).
 */

export class UsageError extends Error {
  override readonly name = 'UsageError'
}

/** serve, snapshot restore, import and export run in the server's process: bin/kvlog dispatches them to apiserver/main.ts. */
export const SERVER_SIDE = 'serve, snapshot restore, import and export are server commands: run them with bin/kvlog'

export type FlagType = 'string' | 'int' | 'bool'

export interface CommandSpec {
  flags: Record<string, FlagType>
  /** Positional argument names, for messages; `min` of them are required. */
  positionals: string[]
  min: number
  /** Output forms besides table and json that the command writes (e.g. dump's yaml and ndjson). */
  outputs?: readonly OutputMode[]
}

export type OutputMode = 'table' | 'json' | 'yaml' | 'ndjson'

export interface Parsed {
  flags: Map<string, string | number | boolean>
  args: string[]
}

/** Flags every client command accepts. */
const COMMON_FLAGS: Record<string, FlagType> = {
  endpoint: 'string',
  endpoints: 'string',
  user: 'string',
  password: 'string',
  token: 'string',
  output: 'string',
  o: 'string',
  help: 'bool',
  h: 'bool',
}

export function parseArgs(argv: string[], spec: CommandSpec): Parsed {
  const types = { ...COMMON_FLAGS, ...spec.flags }
  const flags = new Map<string, string | number | boolean>()
  const args: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--') {
      args.push(...argv.slice(i + 1))
      break
    }
    if (!a.startsWith('-') || a === '-') {
      args.push(a)
      continue
    }
    const body = a.replace(/^--?/, '')
    const eq = body.indexOf('=')
    const name = eq >= 0 ? body.slice(0, eq) : body
    const type = types[name]
    if (type === undefined) throw new UsageError(`unknown flag ${a.split('=')[0]}`)
    let value: string | undefined = eq >= 0 ? body.slice(eq + 1) : undefined
    if (type === 'bool') {
      if (value !== undefined && value !== 'true' && value !== 'false') throw new UsageError(`${a}: expected true or false`)
      flags.set(name, value !== 'false')
      continue
    }
    if (value === undefined) {
      if (i + 1 >= argv.length) throw new UsageError(`${a} needs a value`)
      value = argv[++i]
    }
    if (type === 'int') {
      if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(Number(value)))
        throw new UsageError(`${a}: expected a non-negative integer, got ${JSON.stringify(value)}`)
      flags.set(name, Number(value))
    } else flags.set(name, value)
  }
  if (flags.get('help') !== true && flags.get('h') !== true) {
    if (args.length < spec.min) throw new UsageError(`missing ${spec.positionals.slice(args.length, spec.min).join(' ')}`)
    if (args.length > spec.positionals.length) throw new UsageError(`unexpected argument ${args[spec.positionals.length]}`)
  }
  return { flags, args }
}

export function outputMode(p: Parsed, extra: readonly OutputMode[] = []): OutputMode {
  const o = p.flags.get('output') ?? p.flags.get('o') ?? 'table'
  const allowed: readonly OutputMode[] = ['table', 'json', ...extra]
  if (!allowed.includes(o as OutputMode)) throw new UsageError(`-o: expected ${allowed.join(' or ')}, got ${String(o)}`)
  return o as OutputMode
}

/**
 * A lease id argument, 1 .. 2^64-1, kept as a decimal string (no digit lost). Accepted as decimal
 * (`7587861231285799179`), as hex the way etcdctl prints it (`694d7b5a1d2c3e0b`: any id with a letter
 * a-f is hex) or with a 0x prefix (`0x1234`). An all-digit id is decimal.
 */
export function leaseIdArg(text: string | undefined, what = 'ID'): string {
  if (text === undefined) throw new UsageError(`missing lease ${what}`)
  let id: bigint | undefined
  if (/^[0-9]{1,20}$/.test(text)) id = BigInt(text)
  else if (/^0x[0-9a-f]{1,16}$/i.test(text)) id = BigInt(text)
  else if (/^[0-9a-f]{1,16}$/i.test(text)) id = BigInt(`0x${text}`)
  if (id === undefined || id === 0n || id >= 1n << 64n) {
    throw new UsageError(`not a lease id: ${JSON.stringify(text)} (expected 1 .. 2^64-1, decimal or hex as etcdctl prints it)`)
  }
  return id.toString()
}

/** A lease id as etcdctl prints it: lower-case hex, no prefix. */
export function leaseHex(id: bigint | string): string {
  return BigInt(id).toString(16)
}
