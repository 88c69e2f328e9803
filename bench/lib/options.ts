/**
 * A benchmark's command line: each bench declares its options once (name, kind, default, meaning) and
 * they are parsed strictly by node:util's parseArgs. An unknown flag, a flag without its value or a value
 * of the wrong kind is an error that names the flag (exit code 2), and `--help` / `-h` prints the usage,
 * every flag with its meaning and default, and exits 0: nothing is started in either case.
 */
import { parseArgs } from 'node:util'

/**
 * A number (finite, at least 0, or above 0 when `positive`); `quick` is the default under --quick.
 * Without a default it is undefined when not given, and `shown` says what the bench does then.
 */
export interface NumberOption {
  kind: 'number'
  default?: number
  shown?: string
  quick?: number
  positive?: boolean
  /** The value's name in the usage (`--rounds N`). */
  value?: string
  help: string
  short?: string
}

/** Text; `choices` lists the values allowed. */
export interface StringOption {
  kind: 'string'
  default?: string
  choices?: readonly string[]
  value?: string
  help: string
  short?: string
}

/** Present or not (`--json`). */
export interface FlagOption {
  kind: 'flag'
  help: string
  short?: string
}

/** An explicit `true` or `false` (`--compacts-range false`). */
export interface BoolOption {
  kind: 'bool'
  default: boolean
  help: string
  short?: string
}

export type BenchOption = NumberOption | StringOption | FlagOption | BoolOption
export type BenchOptionSpec = Readonly<Record<string, BenchOption>>

type ValueOf<O extends BenchOption> = O extends NumberOption
  ? O extends { default: number }
    ? number
    : number | undefined
  : O extends FlagOption | BoolOption
    ? boolean
    : O extends { default: string }
      ? string
      : string | undefined

export type BenchOptionValues<S extends BenchOptionSpec> = { readonly [K in keyof S]: ValueOf<S[K]> }

/** The options most benches share. */
export const JSON_OPTION = { kind: 'flag', help: 'print one JSON line of results after the table' } as const
export const QUICK_OPTION = { kind: 'flag', help: 'a small, short run (defaults marked "quick")' } as const

/** A bad command line: the message names the flag. */
export class BenchUsageError extends Error {}

/** The usage text: `synopsis`, then each option with its meaning and default. */
export function benchUsage(synopsis: string, spec: BenchOptionSpec): string {
  const rows: Array<[string, string]> = Object.entries(spec).map(([name, o]) => {
    const short = o.short !== undefined ? `-${o.short}, ` : ''
    const value =
      o.kind === 'number'
        ? (o.value ?? 'N')
        : o.kind === 'string'
          ? (o.value ?? o.choices?.join('|') ?? 'TEXT')
          : o.kind === 'bool'
            ? 'true|false'
            : ''
    return [`  ${short}--${name}${value === '' ? '' : ` ${value}`}`, `${o.help}${defaultText(o)}`]
  })
  rows.push(['  -h, --help', 'print this and exit'])
  const width = Math.max(...rows.map(([flag]) => flag.length)) + 2
  return `${synopsis}\n\nOptions:\n${rows.map(([flag, help]) => `${flag.padEnd(width)}${help}`).join('\n')}\n`
}

function defaultText(o: BenchOption): string {
  if (o.kind === 'flag') return ''
  if (o.kind === 'number' && o.default === undefined) return o.shown !== undefined ? ` (default ${o.shown})` : ''
  if (o.kind === 'string' && o.default === undefined) return ''
  const quick = o.kind === 'number' && o.quick !== undefined ? `; ${o.quick} with --quick` : ''
  return ` (default ${String(o.default)}${quick})`
}

/** Parses `argv` against `spec`; `help` is true when --help or -h was given. Throws BenchUsageError. */
export function parseBenchOptions<S extends BenchOptionSpec>(spec: S, argv: string[]): { help: boolean; values: BenchOptionValues<S> } {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = { help: { type: 'boolean', short: 'h' } }
  for (const [name, o] of Object.entries(spec)) {
    options[name] = { type: o.kind === 'flag' ? 'boolean' : 'string', ...(o.short !== undefined ? { short: o.short } : {}) }
  }
  let parsed: Record<string, string | boolean | undefined>
  try {
    parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values as Record<
      string,
      string | boolean | undefined
    >
  } catch (err) {
    throw new BenchUsageError(err instanceof Error ? err.message : String(err))
  }
  const quick = parsed.quick === true
  const values: Record<string, unknown> = {}
  for (const [name, o] of Object.entries(spec)) values[name] = valueOf(name, o, parsed[name], quick)
  return { help: parsed.help === true, values: values as BenchOptionValues<S> }
}

function valueOf(name: string, o: BenchOption, given: string | boolean | undefined, quick: boolean): unknown {
  switch (o.kind) {
    case 'flag':
      return given === true
    case 'bool':
      if (given === undefined) return o.default
      if (given !== 'true' && given !== 'false') throw new BenchUsageError(`--${name} must be true or false, got '${String(given)}'`)
      return given === 'true'
    case 'string':
      if (given === undefined) return o.default
      if (o.choices !== undefined && !o.choices.includes(String(given))) {
        throw new BenchUsageError(`--${name} must be one of ${o.choices.join(', ')}, got '${String(given)}'`)
      }
      return given
    case 'number': {
      if (given === undefined) return quick && o.quick !== undefined ? o.quick : o.default
      const n = given === '' ? Number.NaN : Number(given)
      if (!Number.isFinite(n) || n < 0 || (o.positive === true && n === 0)) {
        throw new BenchUsageError(`--${name} must be a ${o.positive === true ? 'positive' : 'non-negative'} number, got '${String(given)}'`)
      }
      return n
    }
  }
}

/**
 * The bench's options from the process's arguments. On --help prints the usage and exits 0; on a bad
 * command line prints the error (naming the flag) and a pointer to --help and exits 2.
 */
export function benchOptions<S extends BenchOptionSpec>(
  synopsis: string,
  spec: S,
  argv: string[] = process.argv.slice(2),
): BenchOptionValues<S> {
  try {
    const { help, values } = parseBenchOptions(spec, argv)
    if (help) {
      process.stdout.write(benchUsage(synopsis, spec))
      process.exit(0)
    }
    return values
  } catch (err) {
    if (!(err instanceof BenchUsageError)) throw err
    return exitWithUsageError(err.message)
  }
}

/** Ends the process as a bad command line does: the message (naming the flag), then exit code 2. */
export function exitWithUsageError(message: string): never {
  process.stderr.write(`${message}\n(--help lists the options)\n`)
  process.exit(2)
}
