/**
 * Loading the configuration: defaults < config file < KVLOG_* environment < command-line flags.
 *
 *   --config FILE / KVLOG_CONFIG   a JSON or YAML file of settings (camelCase keys, kebab-case accepted);
 *                                  the flag wins over the variable; an empty path means no file
 *   KVLOG_<SETTING>                one variable per setting; any other KVLOG_* variable is an error
 *                                  (except the client's KVLOG_ENDPOINT and the test switch
 *                                  KVLOG_FAILPOINTS, log/failpoints.ts)
 *   --flag value, --flag=value     a flag per setting; the last one given wins
 *   --flag, --flag=false, --no-flag   boolean settings (a boolean never takes the next argument)
 *   --                             ends flags: everything after it is a positional argument
 *
 * Everything that is not a flag is returned, in order, in `args` (the CLI's command and its operands).
 * Every problem throws ConfigError naming the setting and where its value came from; nothing is
 * silently ignored, so a typo in a flag, a file key or a variable name stops the server at startup.
 */
import { readFileSync } from 'node:fs'
import { extname, resolve } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { didYouMean, parseCommandLine, settingFlags, UsageError, type CommandLine, type UsageCode } from './args.js'
import { parseSettingValue, ValueError } from './parse-values.js'
import { DEFAULT_CONFIG, SETTINGS, type Config, type ConfigSource, type Setting } from './schema.js'

export class ConfigError extends Error {
  override readonly name = 'ConfigError'
  constructor(
    message: string,
    /** The setting's key, or the unknown name as written (a flag without its dashes, a file key, a variable). */
    readonly setting: string,
    readonly source: ConfigSource,
    /** The flag as written, the environment variable, or the config file's absolute path. */
    readonly origin: string,
    /** A flag's mistakes have the command line's codes; a file's or a variable's are BAD_SETTING. */
    readonly code: UsageCode = 'BAD_SETTING',
  ) {
    super(message)
  }
}

export interface LoadConfigOptions {
  /** Command-line arguments without node and the script; default process.argv.slice(2). */
  argv?: readonly string[]
  /** Default process.env. */
  env?: Readonly<Record<string, string | undefined>>
}

export interface LoadedConfig {
  config: Config
  /** The positional arguments, in order. */
  args: string[]
  /** Where each setting's value came from. */
  sources: Record<keyof Config, ConfigSource>
  /** Absolute path of the config file read, if any. */
  configFile: string | undefined
}

export const CONFIG_FLAG = '--config'
export const CONFIG_ENV = 'KVLOG_CONFIG'
const ENV_PREFIX = 'KVLOG_'
/** KVLOG_* variables that are not server settings: the CLI's --endpoint, and failpoints for robustness tests. */
const CLIENT_ENV = ['KVLOG_ENDPOINT', 'KVLOG_FAILPOINTS'] as const

const byKey = new Map<string, Setting>(SETTINGS.map((s) => [s.key, s]))
const byFlagName = new Map<string, Setting>(SETTINGS.map((s) => [s.flag.slice(2), s]))
const byEnv = new Map<string, Setting>(SETTINGS.map((s) => [s.env, s]))

/** One value to apply, with what error messages need: `label` names the setting and its source. */
interface RawValue {
  setting: Setting
  raw: unknown
  source: ConfigSource
  label: string
  origin: string
}

export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  const cli = parseArgv(options.argv ?? process.argv.slice(2))
  const fromFlags = cli.flags.map(({ setting, raw, flag }): RawValue => {
    return { setting, raw, source: 'flag', label: `${flag} (flag)`, origin: flag }
  })
  const fromEnv = readEnv(options.env ?? process.env)
  const path = cli.configFile ?? fromEnv.configFile
  const configFile = path === undefined || path === '' ? undefined : resolve(path)
  const fromFile = configFile === undefined ? [] : readConfigFile(configFile)

  const config: Config = { ...DEFAULT_CONFIG }
  const sources = Object.fromEntries(SETTINGS.map((s) => [s.key, 'default'])) as Record<keyof Config, ConfigSource>
  // Applied lowest precedence first, so later sources overwrite earlier ones.
  for (const value of [...fromFile, ...fromEnv.values, ...fromFlags]) {
    ;(config as unknown as Record<string, unknown>)[value.setting.key] = parse(value)
    sources[value.setting.key] = value.source
  }
  return { config, args: cli.args, sources, configFile }
}

function parse({ setting, raw, source, label, origin }: RawValue): unknown {
  try {
    return parseSettingValue(setting, raw)
  } catch (err) {
    if (!(err instanceof ValueError)) throw err
    const message = err.kind === 'range' ? `${label} ${err.message}` : `invalid value for ${label}: ${err.message}`
    throw new ConfigError(message, setting.key, source, origin, source === 'flag' ? 'BAD_VALUE' : 'BAD_SETTING')
  }
}

/** A flag's value as written: a string, or true/false for a bare `--flag` / `--no-flag` of a boolean. */
export interface FlagValue {
  setting: Setting
  raw: string | boolean
  /** The flag as written, without any `=value`: "--max-txn-ops", "--no-foo". */
  flag: string
}

export interface ParsedArgv {
  flags: FlagValue[]
  args: string[]
  /** The value of the last --config, if any. */
  configFile: string | undefined
}

/**
 * Splits argv into flag values (not yet parsed as their types) and positional arguments, with the one
 * command-line parser (args.ts). Throws ConfigError for unknown flags and missing values. `settings` is
 * injectable for tests.
 */
export function parseArgv(argv: readonly string[], settings: readonly Setting[] = SETTINGS): ParsedArgv {
  const known = new Map<string, Setting>(settings.map((s) => [s.flag.slice(2), s]))
  let line: CommandLine
  try {
    line = parseCommandLine(argv, settingFlags(settings))
  } catch (err) {
    if (!(err instanceof UsageError) || err.flag === undefined) throw err
    const flag = err.flag
    const message =
      err.code === 'MISSING_VALUE'
        ? `missing value for ${flag} (flag)`
        : err.code === 'BAD_VALUE'
          ? `${flag} (flag) takes no value`
          : err.message
    const setting = err.code === 'BAD_VALUE' ? (known.get(flag.replace(/^--no-/, ''))?.key ?? '') : flag.replace(/^-+/, '')
    throw new ConfigError(message, setting, 'flag', flag, err.code)
  }
  const flags: FlagValue[] = []
  let configFile: string | undefined
  for (const { name, value, flag } of line.flags) {
    if (name === 'config') configFile = String(value)
    else flags.push({ setting: known.get(name) as Setting, raw: value, flag })
  }
  return { flags, args: line.positionals, configFile }
}

function readEnv(env: Readonly<Record<string, string | undefined>>): { values: RawValue[]; configFile?: string } {
  const values: RawValue[] = []
  let configFile: string | undefined
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || raw === undefined) continue
    if (name === CONFIG_ENV) {
      configFile = raw
      continue
    }
    if ((CLIENT_ENV as readonly string[]).includes(name)) continue
    const setting = byEnv.get(name)
    if (setting === undefined) {
      const hint = didYouMean(name, [...byEnv.keys(), CONFIG_ENV])
      throw new ConfigError(`unknown environment variable ${name}${hint}`, name, 'env', name)
    }
    values.push({ setting, raw, source: 'env', label: `${setting.key} (env ${name})`, origin: name })
  }
  return { values, configFile }
}

/** Reads a config file's settings. `path` is absolute. */
function readConfigFile(path: string): RawValue[] {
  const fail = (message: string, setting = 'config'): never => {
    throw new ConfigError(message, setting, 'file', path)
  }
  let text = ''
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    fail(`cannot read config file ${path}: ${(err as Error).message}`)
  }
  const data = parseDocument(path, text, fail)
  if (data === null || data === undefined) return [] // an empty file sets nothing
  if (typeof data !== 'object' || Array.isArray(data)) {
    fail(`config file ${path} must be a mapping of setting names to values, got ${Array.isArray(data) ? 'a list' : typeof data}`)
  }
  const values: RawValue[] = []
  const seen = new Map<keyof Config, string>()
  for (const [name, raw] of Object.entries(data as Record<string, unknown>)) {
    const setting = byKey.get(name) ?? byFlagName.get(name)
    if (setting === undefined) {
      fail(`unknown setting "${name}" in ${path}${didYouMean(name, [...byKey.keys()])}`, name)
    } else {
      const twice = seen.get(setting.key)
      if (twice !== undefined) fail(`"${twice}" and "${name}" both set ${setting.key} in ${path}`, setting.key)
      seen.set(setting.key, name)
      values.push({ setting, raw, source: 'file', label: `${name} (file ${path})`, origin: path })
    }
  }
  return values
}

/** .json is JSON, .yaml/.yml is YAML; anything else is tried as JSON, then as YAML. */
function parseDocument(path: string, text: string, fail: (message: string) => never): unknown {
  const ext = extname(path).toLowerCase()
  const asJson = (): unknown => JSON.parse(text)
  const asYaml = (): unknown => parseYaml(text)
  const attempt = (read: () => unknown, format: string): unknown => {
    try {
      return read()
    } catch (err) {
      return fail(`cannot parse config file ${path} as ${format}: ${(err as Error).message}`)
    }
  }
  if (ext === '.json') return attempt(asJson, 'JSON')
  if (ext === '.yaml' || ext === '.yml') return attempt(asYaml, 'YAML')
  try {
    return asJson()
  } catch {
    return attempt(asYaml, 'JSON or YAML')
  }
}
