/**
 * An engine's settings are settings of config/schema.ts under their own names (the schema documents each
 * and holds its one default): an engine lists the keys it reads and picks them out of a Config.
 */
import type { Config } from '../config/index.js'

export function pickSettings<K extends keyof Config>(config: Readonly<Config>, keys: readonly K[]): Pick<Config, K> {
  const out: Partial<Pick<Config, K>> = {}
  for (const key of keys) out[key] = config[key]
  return out as Pick<Config, K>
}
