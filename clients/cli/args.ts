/**
 * Command-line parsing for the client commands: `--flag value`, `--flag=value`, boolean `--flag`, and
 * positionals, through the binary's one parser (config/args.ts, which loads no server code). Unknown
 * flags, missing values and bad numbers are usage errors with a stable code (exit code 2).
 */
import { parseCommandLine, UsageError, type FlagSpec } from '../../config/args.js'

export { UsageError }

/** serve (apiserver/main.ts) and the offline tools snapshot restore, import and export (tools/main.ts) are dispatched by bin/kvlog. */
export const SERVER_SIDE = 'serve (the server) and snapshot restore, import and export (its offline tools) run from bin/kvlog'

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
  cacert: 'string',
  cert: 'string',
  key: 'string',
  output: 'string',
  o: 'string',
  w: 'string',
  help: 'bool',
  h: 'bool',
}

export function parseArgs(argv: string[], spec: CommandSpec): Parsed {
  const types = { ...COMMON_FLAGS, ...spec.flags }
  const specs = Object.fromEntries(
    Object.entries(types).map(([name, type]): [string, FlagSpec] => [name, { type: type === 'bool' ? 'boolean' : 'string' }]),
  )
  const line = parseCommandLine(argv, specs)
  const flags = new Map<string, string | number | boolean>()
  for (const { name, value, flag } of line.flags) {
    const type = types[name]
    if (type === 'bool') {
      if (value !== true && value !== 'true' && value !== 'false')
        throw new UsageError(`${flag}: expected true or false`, 'BAD_VALUE', flag)
      flags.set(name, value !== 'false')
    } else if (type === 'int') {
      if (typeof value !== 'string' || !/^[0-9]+$/.test(value) || !Number.isSafeInteger(Number(value)))
        throw new UsageError(`${flag}: expected a non-negative integer, got ${JSON.stringify(value)}`, 'BAD_VALUE', flag)
      flags.set(name, Number(value))
    } else flags.set(name, value)
  }
  const args = line.positionals
  if (flags.get('help') !== true && flags.get('h') !== true) {
    if (args.length < spec.min) throw new UsageError(`missing ${spec.positionals.slice(args.length, spec.min).join(' ')}`)
    if (args.length > spec.positionals.length) throw new UsageError(`unexpected argument ${args[spec.positionals.length]}`)
  }
  return { flags, args }
}

export function outputMode(p: Parsed, extra: readonly OutputMode[] = []): OutputMode {
  const o = p.flags.get('output') ?? p.flags.get('o') ?? p.flags.get('w') ?? 'table'
  const allowed: readonly OutputMode[] = ['table', 'json', ...extra]
  if (!allowed.includes(o as OutputMode)) throw new UsageError(`-o: expected ${allowed.join(' or ')}, got ${String(o)}`, 'BAD_VALUE', '-o')
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
