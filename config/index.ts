/** config/: one schema with defaults; file < env < flags; validation with clear errors. */
export {
  AUTO_COMPACTION_MODES,
  DEFAULT_CONFIG,
  FSYNC_MODES,
  LOG_LEVELS,
  SCHEMA,
  SETTINGS,
  SETTING_KEYS,
  type AutoCompactionMode,
  type Config,
  type ConfigSource,
  type FsyncMode,
  type LogLevel,
  type Setting,
  type SettingType,
} from './schema.js'
export {
  ValueError,
  formatBytes,
  formatDuration,
  parseAddress,
  parseBoolean,
  parseBytes,
  parseDuration,
  parseEnum,
  parseInteger,
  parseSettingValue,
  parseString,
  type Address,
  type ValueErrorKind,
} from './parse-values.js'
export {
  CONFIG_ENV,
  CONFIG_FLAG,
  ConfigError,
  loadConfig,
  parseArgv,
  type FlagValue,
  type LoadConfigOptions,
  type LoadedConfig,
  type ParsedArgv,
} from './load.js'
export { formatDefault, renderConfigDocs } from './print-docs.js'
