// Builds kvlog's LevelDB addon (npm's postinstall), in this folder: binding.cc, classic-level's binding with
// kvlog's additions, over LevelDB 1.20 and Snappy. It adds:
// - ClassicLevel#batchSync (the addon's batch_do_sync), so that the store can write a lone group commit on
//   the main thread: the prebuilt addon has only the thread-pool write, which costs two thread hand-offs
//   per group (docs/benchmarks.md, "Lone writes on the main thread");
// - the open option walPreallocateBytes (wal_preallocation.h): LevelDB's write-ahead log allocated ahead
//   of its writes, so that a synced write's fdatasync does not also commit the filesystem's journal;
// - ClassicLevel#dropFilesInRange (LevelDB's DB::DropFilesInRange, leveldb/): the table files whose keys
//   all lie in a range removed in one edit of the version, for compaction method "drop"
//   (log/level/io/drop-files.ts);
// - Iterator#readSync (the addon's iterator_read_sync): an iterator's next records read on the main thread
//   into one buffer, so that a range read neither crosses to LevelDB's thread pool nor makes a buffer per
//   key and value (log/level/read-step.ts).
// ClassicLevel.kvlogPatchLevel says which of these the loaded addon has; the build is skipped only when the
// built addon's level is current, so that upgrading kvlog rebuilds an older one.
//
// LevelDB's and Snappy's sources are classic-level's (deps/, as installed), copied into deps/ here with
// kvlog's three LevelDB files (leveldb/) laid over them: nothing is written into classic-level's folder,
// and kvlog carries only the files it changes. The copies are checked to be the ones kvlog's files were
// made from. The addon goes to build/Release/kvlog_level.node; classic-level/load.cjs loads it.
//
// Without a C++ toolchain (g++, make, python3) or Node's headers, classic-level's prebuilt addon is used:
// kvlog works, every group goes through LevelDB's thread pool, and this prints a warning. It never fails
// the install.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)

/** kvlog_patch_level in binding.cc. */
const PATCH_LEVEL = 4

/** The built addon, where classic-level/load.cjs looks for it. */
const ADDON = join(here, 'build', 'Release', 'kvlog_level.node')

/**
 * LevelDB 1.20's files (under classic-level's deps/leveldb/leveldb-1.20/) that kvlog's leveldb/ replaces,
 * with the SHA-256 of the versions kvlog's were made from.
 */
const REPLACED = {
  'db/db_impl.cc': '058fbbac230b32879d3ad3c6f768f7d42baff632b8ec6c9f346d423bb8f8bf8b',
  'db/db_impl.h': 'd536113988b757b8cbc6bf15e0deae363251a53c9dbb0b4fb2435532c9124772',
  'include/leveldb/db.h': 'a202f9686a586822358dd33c6a4c07c8a7f10bd6546258d9b28faeb51cd83bf0',
}

/** The folder of a package as kvlog resolves it (in its own node_modules or hoisted above). */
function packageDir(name, from = require) {
  try {
    return dirname(from.resolve(`${name}/package.json`))
  } catch {
    return undefined
  }
}

/** Whether the built addon is this level (in a fresh process: no module cache). */
function isCurrent() {
  if (!existsSync(ADDON)) return false
  const probe = `process.exit(require(${JSON.stringify(ADDON)}).kvlog_patch_level === ${PATCH_LEVEL} ? 0 : 1)`
  return spawnSync(process.execPath, ['-e', probe], { stdio: 'ignore' }).status === 0
}

/** The last lines of a child's output, for a warning. */
function tail(result) {
  return `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().split('\n').slice(-20).join('\n')
}

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex')

/**
 * Copies LevelDB, Snappy and napi-macros' header from classic-level's install into deps/ and lays kvlog's
 * LevelDB files over them; says why not when classic-level's LevelDB is not the one they were made from.
 */
function stage(classicLevel) {
  const leveldb = join(classicLevel, 'deps', 'leveldb', 'leveldb-1.20')
  for (const [file, hash] of Object.entries(REPLACED)) {
    const original = join(leveldb, file)
    if (!existsSync(original) || sha256(original) !== hash)
      return `classic-level's ${join('deps/leveldb/leveldb-1.20', file)} is not the one kvlog's leveldb/ was made from`
  }
  const napiMacros = packageDir('napi-macros', createRequire(join(classicLevel, 'package.json')))
  if (napiMacros === undefined) return 'napi-macros (a dependency of classic-level) is not installed'
  const deps = join(here, 'deps')
  rmSync(deps, { recursive: true, force: true })
  cpSync(join(classicLevel, 'deps'), deps, { recursive: true })
  cpSync(join(here, 'leveldb'), join(deps, 'leveldb', 'leveldb-1.20'), { recursive: true, filter: (src) => !src.endsWith('LICENSE') })
  mkdirSync(join(deps, 'napi-macros'))
  cpSync(join(napiMacros, 'napi-macros.h'), join(deps, 'napi-macros', 'napi-macros.h'))
  return undefined
}

/** npm's own node-gyp: npm names it in the environment of the scripts it runs. */
function nodeGypPath() {
  if (process.env.npm_config_node_gyp) return process.env.npm_config_node_gyp
  const npmCli = process.env.npm_execpath
  return npmCli ? join(dirname(npmCli), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js') : undefined
}

function warn(reason) {
  // An addon of another level must not be loaded in place of classic-level's own.
  rmSync(join(here, 'build'), { recursive: true, force: true })
  console.warn(`kvlog: WARNING: kvlog's LevelDB addon was not built (${reason}); classic-level's prebuilt addon is used.`)
  console.warn(
    "kvlog: every write goes through LevelDB's thread pool and its log is appended as it grows; install g++, make and python3 then `npm run postinstall` in a checkout (`npm rebuild kvlog` where kvlog is installed) builds it.",
  )
}

/**
 * Compiling LevelDB, Snappy and the binding on one core, in seconds: on an idle machine, and on one busy
 * with other work (both measured on two cores, times two).
 */
const ONE_CORE_S = { idle: 40, busy: 140 }

/** How long the build takes, roughly: one core's compiling time shared by the jobs. */
function buildTime(cores) {
  const [low, high] = [ONE_CORE_S.idle, ONE_CORE_S.busy].map((s) => Math.max(5, Math.round(s / cores / 5) * 5))
  return `about ${low}-${high} s`
}

function main() {
  if (isCurrent()) return
  const classicLevel = packageDir('classic-level')
  if (classicLevel === undefined) return warn('classic-level is not installed')
  const nodeGyp = nodeGypPath()
  if (nodeGyp === undefined || !existsSync(nodeGyp)) return warn("npm's node-gyp was not found")
  // Node's headers next to the running node (Debian's and nodejs.org's layouts): node-gyp would otherwise
  // download them.
  const nodeDir = dirname(dirname(process.execPath))
  if (!existsSync(join(nodeDir, 'include', 'node', 'node_api.h'))) return warn(`no Node headers under ${nodeDir}/include/node`)
  const unstaged = stage(classicLevel)
  if (unstaged !== undefined) return warn(unstaged)

  const started = Date.now()
  const cores = availableParallelism()
  process.stderr.write(`kvlog: building its LevelDB addon (LevelDB and Snappy) from source, ${buildTime(cores)} on ${cores} cores...\n`)
  const build = spawnSync(process.execPath, [nodeGyp, 'rebuild', `--nodedir=${nodeDir}`, '-j', String(cores)], {
    cwd: here,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  // The staged sources are needed only by the compiler.
  rmSync(join(here, 'deps'), { recursive: true, force: true })
  if (build.status !== 0) {
    console.warn(tail(build))
    return warn(`node-gyp exited with ${build.status ?? build.signal}`)
  }
  if (!isCurrent()) return warn(`the build is not patch level ${PATCH_LEVEL}`)
  process.stderr.write(`kvlog: LevelDB addon built in ${((Date.now() - started) / 1000).toFixed(0)} s, patch level ${PATCH_LEVEL}.\n`)
}

main()
