/**
 * classic-level as kvlog loads it: kvlog's copy of its JavaScript layer (log/level/native/classic-level/)
 * over kvlog's LevelDB addon when the install built it (log/level/native/build-addon.mjs), else over
 * classic-level's prebuilt addon. The API and types are classic-level's; what kvlog's addon adds is
 * probed where it is used (ClassicLevel.kvlogPatchLevel, batchSync, dropFilesInRange, Iterator#readSync).
 * Every use of classic-level in kvlog imports it from here.
 */
import { createRequire } from 'node:module'

import type * as Classic from 'classic-level'

interface Layer {
  ClassicLevel: typeof Classic.ClassicLevel
  kvlogAddonFile: string | undefined
}

// From dist/log/level/ to log/level/native/ at the package's root.
const layer = createRequire(import.meta.url)('../../../log/level/native/classic-level/index.cjs') as Layer

export const ClassicLevel = layer.ClassicLevel
export type ClassicLevel<K = string, V = string> = Classic.ClassicLevel<K, V>

/** The addon file loaded when it is kvlog's build, else undefined (classic-level's prebuilt addon). */
export const kvlogAddonFile = layer.kvlogAddonFile
