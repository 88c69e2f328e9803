/**
 * Benchmarks' command lines: parsed strictly against each bench's declared options. Every bench script,
 * run for real: `--help` prints its usage and exits 0, an unknown flag or a flag without its value exits 2
 * naming it, and neither starts anything (the scripts' servers and stores go under TMPDIR, which stays
 * empty; a script that started anyway is stopped as soon as something appears there).
 */
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchUsage, BenchUsageError, parseBenchOptions, type BenchOptionSpec } from '../../../bench/lib/options.js'
import { sleep } from '../../support/wait.js'

const BENCH = fileURLToPath(new URL('../../../bench/', import.meta.url))
/** Each bench script, and one of its options that takes a value. */
const SCRIPTS: Array<[string, string]> = [
  ['auth-flood.bench.js', 'rounds'],
  ['compaction.bench.js', 'seconds'],
  ['etcd-snapshot.bench.js', 'revisions'],
  ['flush-stall.bench.js', 'rounds'],
  ['follow-etcd.bench.js', 'seconds'],
  ['store.bench.js', 'seconds'],
  ['ui-first-view.bench.js', 'revisions'],
  ['watch.bench.js', 'seconds'],
  ['compare/cluster.js', 'rounds'],
  ['compare/compare.js', 'seconds'],
  ['compare/door.js', 'seconds'],
  ['compare/lists.js', 'rounds'],
  ['scale/scale.js', 'list-keys'],
]

interface Outcome {
  code: number | string
  stdout: string
  stderr: string
  /** What the script created under its TMPDIR (empty unless it started a benchmark). */
  created: string[]
}

/**
 * Runs a bench script with its own empty TMPDIR until it exits, or until it creates something there
 * (then it and what it started are killed).
 */
async function runBench(script: string, args: string[]): Promise<Outcome> {
  const tmp = await mkdtemp(join(tmpdir(), 'bench-options-'))
  try {
    const child = spawn(process.execPath, [join(BENCH, script), ...args], {
      env: { ...process.env, TMPDIR: tmp },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group: servers it started are stopped with it
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    let code: number | string | undefined
    const exited = new Promise<void>((resolve) =>
      child.on('exit', (c, signal) => {
        code = c ?? signal ?? -1
        resolve()
      }),
    )
    let created: string[] = []
    while (code === undefined) {
      created = await readdir(tmp)
      if (created.length > 0) {
        process.kill(-child.pid!, 'SIGKILL')
        break
      }
      await Promise.race([exited, sleep(50)])
    }
    await exited
    return { code: code!, stdout, stderr, created: created.length > 0 ? created : await readdir(tmp) }
  } finally {
    await rm(tmp, { recursive: true, force: true })
  }
}

const SPEC = {
  json: { kind: 'flag', help: 'JSON' },
  quick: { kind: 'flag', help: 'quick' },
  rounds: { kind: 'number', default: 3, quick: 1, help: 'rounds' },
  seconds: { kind: 'number', default: 5, positive: true, help: 'seconds' },
  batch: { kind: 'number', shown: 'the config', help: 'batch' },
  method: { kind: 'string', default: 'drop', choices: ['drop', 'scan'], help: 'method' },
  dir: { kind: 'string', help: 'dir' },
  range: { kind: 'bool', default: true, help: 'range' },
  output: { kind: 'string', short: 'o', default: 'table', help: 'output' },
} as const satisfies BenchOptionSpec

function usageError(argv: string[]): string {
  try {
    parseBenchOptions(SPEC, argv)
  } catch (err) {
    expect(err).to.be.instanceOf(BenchUsageError)
    return (err as Error).message
  }
  return expect.fail(`${argv.join(' ')} was accepted`)
}

describe('bench/lib/options', function () {
  this.timeout(120_000)

  it('parses the declared options: defaults, --quick defaults, numbers, choices, true/false, short names', () => {
    expect(parseBenchOptions(SPEC, []).values).to.deep.equal({
      json: false,
      quick: false,
      rounds: 3,
      seconds: 5,
      batch: undefined,
      method: 'drop',
      dir: undefined,
      range: true,
      output: 'table',
    })
    const { help, values } = parseBenchOptions(SPEC, ['--quick', '--json', '--seconds=0.5', '--batch', '7', '--method', 'scan'])
    expect(help).to.equal(false)
    expect(values).to.include({ json: true, quick: true, rounds: 1, seconds: 0.5, batch: 7, method: 'scan' })
    expect(parseBenchOptions(SPEC, ['--range', 'false', '-o', 'json', '--dir', '/tmp/x', '--rounds', '0']).values).to.include({
      range: false,
      output: 'json',
      dir: '/tmp/x',
      rounds: 0,
    })
    expect(parseBenchOptions(SPEC, ['-h']).help).to.equal(true)
    expect(parseBenchOptions(SPEC, ['--help', '--rounds', '2']).help).to.equal(true)
  })

  it('refuses what it does not know or cannot read, naming the flag', () => {
    expect(usageError(['--nope'])).to.contain('--nope')
    expect(usageError(['--rounds'])).to.contain('--rounds')
    expect(usageError(['--rounds', '--json'])).to.contain('--rounds')
    expect(usageError(['--rounds', 'many'])).to.contain('--rounds')
    expect(usageError(['--rounds', '-1'])).to.contain('--rounds')
    expect(usageError(['--seconds', '0'])).to.contain('--seconds')
    expect(usageError(['--method', 'fast'])).to.contain('--method')
    expect(usageError(['--range', 'maybe'])).to.contain('--range')
    expect(usageError(['--json=yes'])).to.contain('--json')
    expect(usageError(['stray'])).to.contain('stray')
  })

  it('the usage lists every option with its meaning and default', () => {
    const usage = benchUsage('npm run bench:x -- [options]', SPEC)
    expect(usage).to.match(/^npm run bench:x -- \[options\]\n/)
    for (const name of Object.keys(SPEC)) expect(usage).to.contain(`--${name}`)
    expect(usage).to.match(/--rounds N +rounds \(default 3; 1 with --quick\)/)
    expect(usage).to.match(/--batch N +batch \(default the config\)/)
    expect(usage).to.match(/--method drop\|scan +method \(default drop\)/)
    expect(usage).to.match(/--range true\|false +range \(default true\)/)
    expect(usage).to.match(/-o, --output TEXT +output \(default table\)/)
    expect(usage).to.match(/-h, --help/)
  })

  for (const [script, valued] of SCRIPTS) {
    describe(script, () => {
      it('--help prints the usage and exits 0, starting nothing', async () => {
        const r = await runBench(script, ['--help'])
        expect(r.created, 'what the script created: it started a benchmark').to.deep.equal([])
        expect(r.code, r.stderr).to.equal(0)
        expect(r.stdout).to.match(/^npm run bench:[a-z-]+ -- \[options\]: /)
        expect(r.stdout).to.contain('\nOptions:\n')
        expect(r.stdout).to.contain('-h, --help')
      })

      it('an unknown flag, or a flag without its value, exits 2 naming it, starting nothing', async () => {
        const unknown = await runBench(script, ['--no-such-flag'])
        expect(unknown.created, 'what the script created: it started a benchmark').to.deep.equal([])
        expect(unknown.code).to.equal(2)
        expect(unknown.stderr).to.contain('--no-such-flag')
        const missing = await runBench(script, [`--${valued}`])
        expect(missing.created, 'what the script created: it started a benchmark').to.deep.equal([])
        expect(missing.code).to.equal(2)
        expect(missing.stderr).to.contain(`--${valued}`)
      })
    })
  }
})
