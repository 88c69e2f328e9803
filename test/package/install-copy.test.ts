/**
 * Installing from a copy that already holds dist/ (docs/deployment.md: `npm ci --omit=dev` in
 * /opt/kvlog): the `prepare` script, run by npm in a copy of package.json with a dist/ and without
 * TypeScript, builds nothing and succeeds; without dist/ it builds (and, with no TypeScript, fails).
 * And the packed file list holds no source maps (the package ships no .ts sources for them).
 */
import { expect } from 'chai'
import { execFile, spawnSync } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const run = promisify(execFile)
const REPO = fileURLToPath(new URL('../../../', import.meta.url))

describe('package: install from a copy with dist/', function () {
  this.timeout(120_000)
  let dir: string

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-install-copy-'))
    await copyFile(join(REPO, 'package.json'), join(dir, 'package.json'))
  })
  after(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  it('prepare skips the build when dist/ is there and TypeScript is not; builds (here: fails) without dist/', async () => {
    const npm = () => spawnSync('npm', ['run', 'prepare'], { cwd: dir, encoding: 'utf8' })
    const withoutDist = npm()
    expect(withoutDist.status, 'without dist/ it must try to build').to.not.equal(0)
    await mkdir(join(dir, 'dist'))
    const withDist = npm()
    expect(withDist.status, withDist.stderr).to.equal(0)
    expect(withDist.stdout).to.contain('nothing to build')
  })

  it('npm pack ships no source maps', async () => {
    const { stdout } = await run('npm', ['pack', '--dry-run', '--ignore-scripts', '--json'], { cwd: REPO, maxBuffer: 64 * 1024 * 1024 })
    const files = (JSON.parse(stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path)
    expect(files.some((f) => f.startsWith('dist/'))).to.equal(true)
    expect(files.filter((f) => f.endsWith('.map'))).to.deep.equal([])
  })
})
