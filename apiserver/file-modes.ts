/**
 * Files only the server's user may read, as etcd keeps them: the server's commands run with umask 077, so
 * everything they create (LevelDB's tables and logs, which LevelDB opens 0644 before the umask, snapshots
 * and exports, the ready file) is 0600 and every directory 0700, whatever umask they were started with.
 * A data directory made earlier with wider modes is narrowed to 0700 (which closes the files in it too).
 *
 * Private keys (tlsKeyFile, the JWT priv-key of authToken) that group or others may read are warned
 * about, not refused, as etcd does: deployments often mount keys 0640 or 0644 (a Kubernetes Secret
 * volume's default is 0644) where no other user is present, and refusing would stop those servers.
 */
import { chmod, stat } from 'node:fs/promises'
import type { Config } from '../config/index.js'
import { parseAuthToken } from './auth/jwt.js'

export const PRIVATE_UMASK = 0o077
export const PRIVATE_DIR_MODE = 0o700
export const PRIVATE_FILE_MODE = 0o600

/** Makes files created by this process from now on private to its user. */
export function usePrivateUmask(): void {
  process.umask(PRIVATE_UMASK)
}

/** Narrows an existing data directory to 0700; the mode it had when it was wider, else undefined. */
export async function narrowDataDir(dir: string): Promise<number | undefined> {
  const s = await stat(dir).catch(() => undefined)
  if (s === undefined || !s.isDirectory() || (s.mode & 0o077) === 0) return undefined
  await chmod(dir, PRIVATE_DIR_MODE)
  return s.mode & 0o777
}

export interface LooseKey {
  setting: 'tlsKeyFile' | 'authToken priv-key'
  file: string
  mode: string
}

/** The private key files that group or others may read. */
export async function looseKeyFiles(config: Config): Promise<LooseKey[]> {
  const keys: Array<[LooseKey['setting'], string]> = []
  if (config.tlsKeyFile !== '') keys.push(['tlsKeyFile', config.tlsKeyFile])
  const privKey = parseAuthToken(config.authToken)?.privKey
  if (privKey !== undefined) keys.push(['authToken priv-key', privKey])
  const loose: LooseKey[] = []
  for (const [setting, file] of keys) {
    const s = await stat(file).catch(() => undefined)
    if (s !== undefined && (s.mode & 0o077) !== 0) loose.push({ setting, file, mode: `0${(s.mode & 0o777).toString(8)}` })
  }
  return loose
}
