// Builds classic-level with log/level/native/patches applied (npm's postinstall). The patch adds:
// - ClassicLevel#batchSync (the addon's batch_do_sync), so that the store can write a lone group commit on
//   the main thread: the prebuilt addon has only the thread-pool write, which costs two thread hand-offs
//   per group (docs/benchmarks.md, "Lone writes on the main thread");
// - the open option walPreallocateBytes (wal_preallocation.h): LevelDB's write-ahead log allocated ahead
//   of its writes, so that a synced write's fdatasync does not also commit the filesystem's journal;
// - ClassicLevel#dropFilesInRange (LevelDB's DB::DropFilesInRange): the table files whose keys all lie in
//   a range removed in one edit of the version, for compaction method "drop" (log/level/io/drop-files.ts);
// - Iterator#readSync (the addon's iterator_read_sync): an iterator's next records read on the main thread
//   into one buffer, so that a range read neither crosses to LevelDB's thread pool nor makes a buffer per
//   key and value (log/level/read-step.ts).
// ClassicLevel.kvlogPatchLevel says which of these the loaded addon has; a build is skipped when current.
//
// The patch is applied with patch-package, run from the project that holds classic-level's node_modules
// (this checkout, or the application kvlog is installed into). Without a C++ toolchain (g++, make,
// python3) or Node's headers the prebuilt addon stays: kvlog works, every group goes through LevelDB's
// thread pool, and this prints a warning. It never fails the install.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)

/** The folder of a package as kvlog resolves it (in its own node_modules or hoisted above). */
function packageDir(name) {
  try {
    return dirname(require.resolve(`${name}/package.json`))
  } catch {
    return undefined
  }
}

/** kvlog_patch_level in the patched binding.cc. */
const PATCH_LEVEL = 4

/** Whether classic-level, as kvlog loads it, is this patch's build (in a fresh process: no module cache). */
function isCurrent(dir) {
  const probe = `process.exit(require(${JSON.stringify(dir)}).ClassicLevel.kvlogPatchLevel === ${PATCH_LEVEL} ? 0 : 1)`
  return spawnSync(process.execPath, ['-e', probe], { stdio: 'ignore' }).status === 0
}

/** The last lines of a child's output, for a warning. */
function tail(result) {
  return `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().split('\n').slice(-20).join('\n')
}

/** Applies the patch with patch-package from the project whose node_modules holds classic-level. */
function applyPatch(dir) {
  const patchPackage = packageDir('patch-package')
  if (patchPackage === undefined) return 'patch-package is not installed'
  const project = dirname(dirname(dir))
  const result = spawnSync(process.execPath, [join(patchPackage, 'index.js'), '--patch-dir', relative(project, join(here, 'patches'))], {
    cwd: project,
    encoding: 'utf8',
  })
  if (result.status === 0) return undefined
  console.warn(tail(result))
  return `patch-package exited with ${result.status ?? result.signal}`
}

/** npm's own node-gyp: npm names it in the environment of the scripts it runs. */
function nodeGypPath() {
  if (process.env.npm_config_node_gyp) return process.env.npm_config_node_gyp
  const npmCli = process.env.npm_execpath
  return npmCli ? join(dirname(npmCli), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js') : undefined
}

function warn(reason) {
  console.warn(`kvlog: classic-level keeps its prebuilt addon (${reason}).`)
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
  const dir = packageDir('classic-level')
  if (dir === undefined) return warn('classic-level is not installed')
  if (isCurrent(dir)) return
  const unpatched = applyPatch(dir)
  if (unpatched !== undefined) return warn(unpatched)
  const nodeGyp = nodeGypPath()
  if (nodeGyp === undefined || !existsSync(nodeGyp)) return warn("npm's node-gyp was not found")
  // Node's headers next to the running node (Debian's and nodejs.org's layouts): node-gyp would otherwise
  // download them.
  const nodeDir = dirname(dirname(process.execPath))
  if (!existsSync(join(nodeDir, 'include', 'node', 'node_api.h'))) return warn(`no Node headers under ${nodeDir}/include/node`)

  const started = Date.now()
  const cores = availableParallelism()
  process.stderr.write(`kvlog: building classic-level (LevelDB and Snappy) from source, ${buildTime(cores)} on ${cores} cores...\n`)
  const build = spawnSync(process.execPath, [nodeGyp, 'rebuild', `--nodedir=${nodeDir}`, '-j', String(cores)], {
    cwd: dir,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  if (build.status !== 0) {
    console.warn(tail(build))
    return warn(`node-gyp exited with ${build.status ?? build.signal}`)
  }
  if (!isCurrent(dir)) return warn(`the build is not patch level ${PATCH_LEVEL}`)
  process.stderr.write(`kvlog: classic-level built in ${((Date.now() - started) / 1000).toFixed(0)} s, patch level ${PATCH_LEVEL}.\n`)
}

main()
