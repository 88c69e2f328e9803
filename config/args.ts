/**
 * The command-line parser of the whole `kvlog` binary: the server's flags (derived here from the config
 * schema), the offline tools' and the client commands'. Tokenizing is node's util.parseArgs (kept with
 * node, no dependency); this module adds what every command shares on top of it: an unknown flag, a
 * missing value or a value given to a flag that takes none is a UsageError with a stable code, and a
 * misspelt flag is answered with the one it probably meant.
 *
 * It imports nothing but the schema, so the client CLI may use it without loading server code.
 */
import { parseArgs } from 'node:util'
import { SETTINGS, type Setting } from './schema.js'

/** The stable codes of command-line mistakes (docs/errors.md); every one exits 2. */
export const USAGE_CODES = {
  UNKNOWN_FLAG: 'A flag the command does not know (a typo, or a flag of another command).',
  MISSING_VALUE: 'A flag that takes a value was given none (the argument after it is missing or is another flag).',
  BAD_VALUE: 'A flag or argument has a value of the wrong form, or a flag that takes no value was given one.',
  BAD_ARGUMENTS: 'Missing or extra arguments, or flags that do not go together.',
  BAD_SETTING: 'A setting from the config file or a KVLOG_* variable is unknown or has a bad value.',
} as const

export type UsageCode = keyof typeof USAGE_CODES

export class UsageError extends Error {
  override readonly name: string = 'UsageError'
  constructor(
    message: string,
    readonly code: UsageCode = 'BAD_ARGUMENTS',
    /** The flag as written, without any `=value`, when the mistake is one flag's. */
    readonly flag?: string,
  ) {
    super(message)
  }
}

export interface FlagSpec {
  /** A string flag takes a value (`--f v`, `--f=v`); a boolean never takes the next argument. */
  type: 'string' | 'boolean'
  /** A boolean that also reads `--no-NAME` as false. */
  negatable?: boolean
}

export type FlagSpecs = Readonly<Record<string, FlagSpec>>

export interface FlagValue {
  name: string
  /** The text after `=` or the next argument; for a boolean, true, false (`--no-NAME`) or the `=` text. */
  value: string | boolean
  /** As written, without any `=value`: "--max-txn-ops", "-o", "--no-fsync". */
  flag: string
}

export interface CommandLine {
  /** In the order given (the last of a repeated flag wins where the caller keeps one). */
  flags: FlagValue[]
  positionals: string[]
}

/**
 * Splits argv into flag values (not yet parsed as their types) and positional arguments; `--` ends the
 * flags. A one-letter name is written `-x`, a longer one `--name`. The argument after a string flag is its
 * value unless it is missing or is itself a `--flag`: "--data-dir --fsync never" is a forgotten value,
 * not a directory called "--fsync" (write --data-dir=--odd-name for that).
 */
export function parseCommandLine(argv: readonly string[], specs: FlagSpecs): CommandLine {
  const options = Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, { type: spec.type }]))
  // strict: false so that unknown flags come back as tokens and get this module's codes and hints.
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true })
  const flags: FlagValue[] = []
  const positionals: string[] = []
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value)
    if (token.kind !== 'option') continue
    const { name, rawName: flag } = token
    const spec = Object.hasOwn(specs, name) ? specs[name] : undefined
    if (spec?.type === 'string') {
      const value = token.value
      if (value === undefined || (token.inlineValue === false && value.startsWith('--') && value.length > 2)) {
        throw new UsageError(`missing value for ${flag}`, 'MISSING_VALUE', flag)
      }
      flags.push({ name, value, flag })
      continue
    }
    if (spec?.type === 'boolean') {
      flags.push({ name, value: token.value ?? true, flag })
      continue
    }
    const negated = name.startsWith('no-') ? specs[name.slice(3)] : undefined
    if (negated?.type === 'boolean' && negated.negatable === true && flag.startsWith('--')) {
      if (token.value !== undefined) throw new UsageError(`${flag} takes no value`, 'BAD_VALUE', flag)
      flags.push({ name: name.slice(3), value: false, flag })
      continue
    }
    throw new UsageError(`unknown flag ${flag}${didYouMean(flag, Object.keys(specs).map(written))}`, 'UNKNOWN_FLAG', flag)
  }
  return { flags, positionals }
}

/** The flag of a name as written: `-o`, `--data-dir`. */
export const written = (name: string): string => (name.length === 1 ? `-${name}` : `--${name}`)

/** `kvlog serve`'s flags: one per setting (booleans also as --no-NAME) and --config. */
export function settingFlags(settings: readonly Setting[] = SETTINGS): Record<string, FlagSpec> {
  const specs: Record<string, FlagSpec> = { config: { type: 'string' } }
  for (const s of settings) {
    specs[s.flag.slice(2)] = s.type === 'boolean' ? { type: 'boolean', negatable: true } : { type: 'string' }
  }
  return specs
}

/** " (did you mean --max-txn-ops?)" when a candidate is a few typos away from name, else "". */
export function didYouMean(name: string, candidates: readonly string[]): string {
  let best = ''
  let bestDistance = Infinity
  for (const candidate of candidates) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase())
    if (d < bestDistance) [best, bestDistance] = [candidate, d]
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 4)) ? ` (did you mean ${best}?)` : ''
}

/** Levenshtein distance. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]
}
