/** Command-line options that the LevelDB benches share (see options.ts). */
import { DEFAULT_LEVEL_LOG_OPTIONS } from '../../log/level/options.js'

export const WRITE_BUFFER_OPTION = {
  kind: 'number',
  default: DEFAULT_LEVEL_LOG_OPTIONS.leveldbWriteBufferSize,
  value: 'BYTES',
  help: "LevelDB's write buffer (leveldbWriteBufferSize)",
} as const

export const TABLE_SYNC_INTERVAL_OPTION = {
  kind: 'number',
  default: DEFAULT_LEVEL_LOG_OPTIONS.tableSyncInterval,
  value: 'MS',
  help: "tableSyncInterval: how often LevelDB's table files are synced as they are written (0: off)",
} as const
