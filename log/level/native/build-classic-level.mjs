// Builds classic-level from its sources once patch-package has applied patches/ (npm's postinstall), so
// that the store can write a lone group commit on the main thread: ClassicLevel#batchSync, the addon's
// batch_do_sync. Its prebuilt addon has only the thread-pool write, which costs two thread hand-offs per
// group (docs/benchmarks.md, "Lone writes on the main thread").
//
// Without a C++ toolchain (g++, make, python3) or Node's headers the prebuilt addon stays: kvlog works, every
// group goes through LevelDB's thread pool, and this prints a warning instead of failing the install.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
const packageDir = join(root, 'node_modules', 'classic-level')

/** Whether classic-level, as Node loads it from the project, has batchSync (a fresh process: no cache). */
function hasBatchSync() {
  const probe = "process.exit(typeof require('classic-level').ClassicLevel.prototype.batchSync === 'function' ? 0 : 1)"
  return spawnSync(process.execPath, ['-e', probe], { cwd: root, stdio: 'ignore' }).status === 0
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
    "kvlog: every write goes through LevelDB's thread pool; install g++, make and python3 then `npm run postinstall` in a checkout (`npm rebuild kvlog` where kvlog is installed) builds it.",
  )
}

function main() {
  if (!existsSync(packageDir)) return warn(`not found at ${packageDir}`)
  if (hasBatchSync()) return
  const nodeGyp = nodeGypPath()
  if (nodeGyp === undefined || !existsSync(nodeGyp)) return warn("npm's node-gyp was not found")
  // Node's headers next to the running node (Debian's and nodejs.org's layouts): node-gyp would otherwise
  // download them.
  const nodeDir = dirname(dirname(process.execPath))
  if (!existsSync(join(nodeDir, 'include', 'node', 'node_api.h'))) return warn(`no Node headers under ${nodeDir}/include/node`)

  const started = Date.now()
  process.stderr.write('kvlog: building classic-level (LevelDB and Snappy) from source, about 20 s on 2 cores...\n')
  const build = spawnSync(process.execPath, [nodeGyp, 'rebuild', `--nodedir=${nodeDir}`, '-j', String(availableParallelism())], {
    cwd: packageDir,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  if (build.status !== 0) {
    const output = `${build.stdout ?? ''}${build.stderr ?? ''}`.trim().split('\n').slice(-20).join('\n')
    console.warn(output)
    return warn(`node-gyp exited with ${build.status ?? build.signal}`)
  }
  if (!hasBatchSync()) return warn('the build has no batchSync: is the patch applied?')
  process.stderr.write(`kvlog: classic-level built in ${((Date.now() - started) / 1000).toFixed(0)} s, with batchSync.\n`)
}

main()
