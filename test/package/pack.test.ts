/**
 * The npm package as a user gets it (`npm run test:install`; docs/deployment.md): `npm pack` of this
 * checkout, installed with `npm install --omit=dev <tarball>` into an empty project in a temp folder, where the install builds kvlog's LevelDB
 * addon in kvlog's own folder (log/level/native/) and leaves classic-level as published. README's in-process
 * example (imported from 'kvlog/log') and a client program (imported from 'kvlog') are type-checked against the installed package's types and run there; the client talks to a
 * `kvlog serve` started from the installed package's bin.
 */
import { expect } from 'chai'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { fileHashes } from '../support/files-under.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'

const run = promisify(execFile)
const REPO = fileURLToPath(new URL('../../../', import.meta.url))
const TSC = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc')

/** The first ```ts block after README's heading `heading`. */
async function readmeExample(heading: string): Promise<string> {
  const readme = await readFile(join(REPO, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf(`\n## ${heading}\n`))
  const block = /```ts\n([\s\S]*?)```/.exec(section)
  if (!block || !section) throw new Error(`README.md has no \`\`\`ts block under "## ${heading}"`)
  return block[1]!
}

const CLIENT = `import { KvlogClient } from 'kvlog'

const kv = new KvlogClient({ endpoint: process.argv[2]! })
const { revision } = await kv.put('/packed/a', 'hello')
const kvAfter = await kv.get('/packed/a')
console.log(JSON.stringify({ revision, value: kvAfter?.value.toString() }))
`

describe('package: npm pack, installed in an empty project', function () {
  this.timeout(300_000)
  let root: string
  let app: string
  let files: string[] = []
  let server: ServerProcess | undefined

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'kvlog-pack-'))
    app = join(root, 'app')
    await mkdir(app)
    // dist/ is already built (the tests run from it): no prepare script on pack.
    const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', root], { cwd: REPO, maxBuffer: 64 << 20 })
    const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[]
    files = info!.files.map((f) => f.path)
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'kvlog-pack-check', private: true, type: 'module' }))
    await run('npm', ['install', '--omit=dev', join(root, info!.filename), '--prefer-offline', '--no-audit', '--no-fund'], {
      cwd: app,
      maxBuffer: 64 << 20,
    })
    await writeFile(join(app, 'in-process.ts'), await inProcessProgram())
    await writeFile(join(app, 'client.ts'), CLIENT)
    await writeFile(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          skipLibCheck: true,
          typeRoots: [join(REPO, 'node_modules', '@types')],
          types: ['node'],
        },
        files: ['in-process.ts', 'client.ts'],
      }),
    )
  })

  after(async () => {
    await server?.cleanup()
    if (root) await rm(root, { recursive: true, force: true })
  })

  /** README's example, followed by a line that prints what it did. */
  async function inProcessProgram(): Promise<string> {
    const example = await readmeExample('Using the log in-process')
    const report =
      'JSON.stringify({ revision, pods: page.kvs.length, next: next.kvs.length, cas: cas.succeeded, casRevision: cas.revision, history: history.entries.length })'
    return `${example}console.log(${report})\n`
  }

  it('ships the compiled library, the bin, the proto files and LICENSE; no compiled tests, benches or build state', () => {
    for (const file of [
      'LICENSE',
      'README.md',
      'bin/kvlog',
      'dist/clients/index.js',
      'dist/clients/index.d.ts',
      'dist/log/index.js',
      'dist/log/index.d.ts',
    ]) {
      expect(files, file).to.include(file)
    }
    expect(files.filter((f) => f.startsWith('apiserver/etcd/proto/'))).to.have.length.above(0)
    expect(files.filter((f) => f.startsWith('dist/test/') || f.startsWith('dist/bench/') || f.endsWith('.tsbuildinfo'))).to.deep.equal([])
    expect(files.filter((f) => /\.test\.(js|ts|d\.ts)$/.test(f))).to.deep.equal([])
  })

  it("builds kvlog's LevelDB addon in kvlog's own folder on install and loads it (log/level/native/)", async () => {
    const kvlog = join(app, 'node_modules', 'kvlog')
    const probe = `const m = await import(${JSON.stringify(join(kvlog, 'dist', 'log', 'level', 'classic-level.js'))}); const p = m.ClassicLevel.prototype; console.log(typeof p.batchSync, typeof p.dropFilesInRange, m.ClassicLevel.kvlogPatchLevel, m.kvlogAddonFile)`
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', probe], { cwd: app })
    expect(stdout.trim()).to.equal(`function function 4 ${join(kvlog, 'log', 'level', 'native', 'build', 'Release', 'kvlog_level.node')}`)
    expect(files).to.include.members([
      'log/level/native/binding.gyp',
      'log/level/native/binding.cc',
      'log/level/native/classic-level/load.cjs',
    ])
    expect(files.filter((f) => f.startsWith('log/level/native/build/') || f.startsWith('log/level/native/deps/'))).to.deep.equal([])
  })

  it("leaves the application's classic-level exactly as published, and installs no patch-package", async () => {
    const installed = join(app, 'node_modules', 'classic-level')
    const { version } = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as { version: string }
    const published = join(root, 'published')
    await mkdir(published)
    const packed = await run('npm', ['pack', `classic-level@${version}`, '--json', '--prefer-offline', '--pack-destination', published], {
      cwd: published,
    })
    const [{ filename }] = JSON.parse(packed.stdout) as { filename: string }[]
    await run('tar', ['xzf', filename], { cwd: published })
    expect(Object.fromEntries(await fileHashes(installed))).to.deep.equal(Object.fromEntries(await fileHashes(join(published, 'package'))))
    expect(existsSync(join(app, 'node_modules', 'patch-package'))).to.equal(false)
  })

  it("type-checks README's in-process example and a client program against the installed package", async () => {
    const tsc = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: app }).catch((err: { stdout?: string }) => err)
    expect(tsc.stdout).to.equal('')
  })

  it("runs README's in-process example from 'kvlog/log'", async () => {
    const { stdout } = await run(process.execPath, ['in-process.js'], { cwd: app })
    // An empty store is at revision 1: the put gets 2, the compare-and-swap 3; the history holds both.
    expect(JSON.parse(stdout)).to.deep.equal({ revision: 2, pods: 1, next: 0, cas: true, casRevision: 3, history: 2 })
  })

  it("runs a client program from 'kvlog' against the installed package's `kvlog serve`", async () => {
    server = await startServerProcess([], undefined, { bin: join(app, 'node_modules', 'kvlog', 'bin', 'kvlog'), readyTimeoutMs: 60_000 })
    expect((await fetch(`${server.http}/readyz`)).status).to.equal(200)
    const { stdout } = await run(process.execPath, ['client.js', server.http], { cwd: app })
    expect(JSON.parse(stdout)).to.deep.equal({ revision: 2, value: 'hello' })
  })
})
