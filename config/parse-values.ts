/**
 * Parsing and validating single setting values.
 *
 * A raw value is a string (from a flag, the environment or a config file) or, from a JSON/YAML file, a
 * number or boolean. Every parser throws ValueError with a message that names the offending value but not
 * the setting or its source; load.ts adds those. Results are plain numbers: byte sizes in bytes,
 * durations in milliseconds, both whole and non-negative.
 *
 *   integers   "128", "-3"; not "1.5", "1e3", "0x10"
 *   booleans   true/false, "true"/"false", "1"/"0", "yes"/"no" (any case)
 *   bytes      1048576, "1048576", "512KiB", "1.5MiB", "2GiB", "10MB" (IEC units are powers of 1024,
 *              SI units powers of 1000; a single letter such as "64M" is rejected as ambiguous)
 *   durations  1500, "1500" (bare numbers are milliseconds), "500ms", "10s", "5m", "1h", "1h30m", "1.5s"
 *   addresses  "HOST:PORT", "[IPv6]:PORT"; port 0..65535
 */
import { isIP, isIPv6 } from 'node:net'
import type { Config, Setting } from './schema.js'

/** 'invalid': the value cannot be read as its type. 'range': it can, but breaks a bound (min, max, non-empty). */
export type ValueErrorKind = 'invalid' | 'range'

export class ValueError extends Error {
  override readonly name = 'ValueError'
  constructor(
    readonly kind: ValueErrorKind,
    message: string,
  ) {
    super(message)
  }
}

/** `"abc"` for strings and numbers, a word for things that have no short spelling. */
function show(raw: unknown): string {
  if (raw === null) return 'null'
  if (Array.isArray(raw)) return 'a list'
  if (typeof raw === 'object') return 'a mapping'
  if (typeof raw === 'string') return JSON.stringify(raw)
  return String(raw)
}

function invalid(raw: unknown, what: string): ValueError {
  return new ValueError('invalid', `${show(raw)} is not ${what}`)
}

export function parseString(raw: unknown): string {
  if (typeof raw !== 'string') throw invalid(raw, 'a string')
  return raw
}

export function parseInteger(raw: unknown): number {
  let n: number
  if (typeof raw === 'number') n = raw
  else if (typeof raw === 'string' && /^[+-]?\d+$/.test(raw.trim())) n = Number(raw.trim())
  else throw invalid(raw, 'an integer')
  if (!Number.isInteger(n)) throw invalid(raw, 'an integer')
  if (!Number.isSafeInteger(n)) throw new ValueError('invalid', `${show(raw)} is too large`)
  return n
}

export function parseBoolean(raw: unknown): boolean {
  if (typeof raw === 'boolean') return raw
  if (raw === 1 || raw === 0) return raw === 1
  if (typeof raw === 'string') {
    const word = raw.trim().toLowerCase()
    if (word === 'true' || word === '1' || word === 'yes') return true
    if (word === 'false' || word === '0' || word === 'no') return false
  }
  throw invalid(raw, 'a boolean (true/false, 1/0, yes/no)')
}

export function parseEnum(raw: unknown, values: readonly string[]): string {
  if (typeof raw === 'string' && values.includes(raw.trim())) return raw.trim()
  throw invalid(raw, `one of ${values.join(', ')}`)
}

/**
 * Exact `mantissa × unit`, where mantissa is a decimal string such as "1.5": BigInt arithmetic, so
 * "1.1MiB" is rejected (not a whole number) rather than rounded. Returns undefined if not whole.
 */
function scale(mantissa: string, unit: number): number | undefined {
  const [whole, fraction = ''] = mantissa.split('.')
  const numerator = BigInt(whole + fraction) * BigInt(unit)
  const denominator = 10n ** BigInt(fraction.length)
  if (numerator % denominator !== 0n) return undefined
  return Number(numerator / denominator)
}

const BYTE_UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
  ki: 2 ** 10,
  mi: 2 ** 20,
  gi: 2 ** 30,
  ti: 2 ** 40,
}

const BYTES_HINT = 'a byte size (e.g. 1048576, "512KiB", "1.5MiB", "2GiB", "10MB")'

export function parseBytes(raw: unknown): number {
  if (typeof raw === 'number') {
    if (!Number.isInteger(raw) || raw < 0) throw invalid(raw, 'a whole, non-negative number of bytes')
    if (!Number.isSafeInteger(raw)) throw new ValueError('invalid', `${show(raw)} is too large`)
    return raw
  }
  const match = typeof raw === 'string' ? /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(raw.trim()) : null
  if (match === null) throw invalid(raw, BYTES_HINT)
  const [, mantissa, unitName] = match
  const unit = unitName === '' ? 1 : BYTE_UNITS[unitName.toLowerCase()]
  if (unit === undefined) {
    throw new ValueError('invalid', `${show(raw)} has an unknown unit "${unitName}" (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)`)
  }
  const bytes = scale(mantissa, unit)
  if (bytes === undefined) throw new ValueError('invalid', `${show(raw)} is not a whole number of bytes`)
  if (!Number.isSafeInteger(bytes)) throw new ValueError('invalid', `${show(raw)} is too large`)
  return bytes
}

const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

const DURATION_HINT = 'a duration (e.g. "500ms", "10s", "5m", "1h30m", or a number of milliseconds)'

export function parseDuration(raw: unknown): number {
  if (typeof raw === 'number') {
    if (!Number.isInteger(raw) || raw < 0) throw invalid(raw, 'a whole, non-negative number of milliseconds')
    if (!Number.isSafeInteger(raw)) throw new ValueError('invalid', `${show(raw)} is too large`)
    return raw
  }
  const text = typeof raw === 'string' ? raw.trim() : ''
  if (/^\d+$/.test(text)) return parseDuration(Number(text))
  // One or more <number><unit> parts, Go style: "1h30m", "1.5s". 'ms' is tried before 'm'.
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(text)) throw invalid(raw, DURATION_HINT)
  let total = 0
  for (const [, mantissa, unitName] of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    const ms = scale(mantissa, DURATION_UNITS[unitName])
    if (ms === undefined) throw new ValueError('invalid', `${show(raw)} is not a whole number of milliseconds`)
    total += ms
  }
  if (!Number.isSafeInteger(total)) throw new ValueError('invalid', `${show(raw)} is too large`)
  return total
}

export interface Address {
  /** A hostname, an IPv4 address, or an IPv6 address without its brackets. */
  host: string
  port: number
}

const HOSTNAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i
const ADDRESS_HINT = 'an address HOST:PORT (e.g. "127.0.0.1:2379", "localhost:8379", "[::1]:2379")'

/** Splits and checks "HOST:PORT". IPv6 hosts must be bracketed: "[::1]:2379". */
export function parseAddress(raw: unknown): Address {
  if (typeof raw !== 'string') throw invalid(raw, ADDRESS_HINT)
  const text = raw.trim()
  const match = /^(\[[^\]]*\]|[^:[\]]*):(\d+)$/.exec(text)
  if (match === null) {
    if (/^[^[]*:.*:/.test(text)) {
      throw new ValueError('invalid', `${show(raw)} is not an address: put IPv6 hosts in brackets, e.g. "[::1]:2379"`)
    }
    throw invalid(raw, ADDRESS_HINT)
  }
  const [, hostPart, portText] = match
  const port = Number(portText)
  if (port > 65535) throw new ValueError('invalid', `${show(raw)} has port ${portText}, not in 0..65535`)
  if (hostPart.startsWith('[')) {
    const host = hostPart.slice(1, -1)
    if (!isIPv6(host)) throw new ValueError('invalid', `${show(raw)} has "${host}" in brackets, which is not an IPv6 address`)
    return { host, port }
  }
  if (hostPart === '') {
    throw new ValueError('invalid', `${show(raw)} has no host (use 0.0.0.0:${portText} to listen on every interface)`)
  }
  // Dotted digits that are not a valid IPv4 address ("300.1.1.1") would otherwise pass as a hostname.
  const looksNumeric = /^[\d.]+$/.test(hostPart)
  if ((looksNumeric && isIP(hostPart) !== 4) || !HOSTNAME.test(hostPart)) {
    throw new ValueError('invalid', `${show(raw)} has an invalid host "${hostPart}"`)
  }
  return { host: hostPart, port }
}

/** "64MiB", "1.5MiB", "512KiB", "1000B": the largest binary unit giving at most 3 decimals, else bytes. */
export function formatBytes(bytes: number): string {
  const units: [string, bigint][] = [
    ['TiB', 1n << 40n],
    ['GiB', 1n << 30n],
    ['MiB', 1n << 20n],
    ['KiB', 1n << 10n],
  ]
  const n = BigInt(bytes)
  for (const [name, unit] of units) {
    // Exact decimal arithmetic: String(bytes / unit) may print a rounded "shortest" form of big quotients.
    if (n < unit || (n * 1000n) % unit !== 0n) continue
    const thousandths = (n * 1000n) / unit
    const fraction = String(thousandths % 1000n)
      .padStart(3, '0')
      .replace(/0+$/, '')
    return `${thousandths / 1000n}${fraction === '' ? '' : `.${fraction}`}${name}`
  }
  return `${bytes}B`
}

/** "1h30m", "10s", "1s500ms", "0s": parses back to the same number of milliseconds. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s'
  const parts: string[] = []
  let rest = ms
  for (const [name, unit] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
    ['ms', 1],
  ] as const) {
    const count = Math.floor(rest / unit)
    if (count > 0) parts.push(`${count}${name}`)
    rest -= count * unit
  }
  return parts.join('')
}

/** A value of the setting's type, in the units range messages use. */
function formatForRange(setting: Setting, value: number): string {
  if (setting.type === 'bytes') return formatBytes(value)
  if (setting.type === 'duration') return formatDuration(value)
  return String(value)
}

function checkRange(setting: Setting, value: number): void {
  const { min, max } = setting
  const tooLow = min !== undefined && value < min
  const tooHigh = max !== undefined && value > max
  if (!tooLow && !tooHigh) return
  const got = `got ${formatForRange(setting, value)}`
  const lo = min === undefined ? '' : formatForRange(setting, min)
  const hi = max === undefined ? '' : formatForRange(setting, max)
  if (min !== undefined && max !== undefined) throw new ValueError('range', `must be between ${lo} and ${hi}, ${got}`)
  if (min !== undefined) throw new ValueError('range', `must be at least ${lo}, ${got}`)
  throw new ValueError('range', `must be at most ${hi}, ${got}`)
}

/**
 * Parses a raw value as the setting's type and checks its bounds. Throws ValueError: kind 'invalid' with a
 * message like `"abc" is not an integer`, kind 'range' with `must be between 1 and 100000, got 0`.
 */
export function parseSettingValue<K extends keyof Config>(setting: Setting<K>, raw: unknown): Config[K] {
  let value: string | number | boolean
  switch (setting.type) {
    case 'string':
      value = parseString(raw)
      if (setting.nonEmpty === true && value === '') throw new ValueError('range', 'must not be empty')
      break
    case 'enum':
      value = parseEnum(raw, setting.values ?? [])
      break
    case 'boolean':
      value = parseBoolean(raw)
      break
    case 'address':
      parseAddress(raw)
      value = (raw as string).trim()
      break
    case 'integer':
    case 'bytes':
    case 'duration':
      value = setting.type === 'integer' ? parseInteger(raw) : setting.type === 'bytes' ? parseBytes(raw) : parseDuration(raw)
      checkRange(setting as Setting, value)
      break
  }
  return value as Config[K]
}
