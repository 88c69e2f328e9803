/**
 * The one command-line parser (config/args.ts): its tokens, its stable codes, and that every part of the
 * binary (serve, an offline tool, a client command) answers an unknown flag with the same code.
 */
import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import { parseCommandLine, settingFlags, USAGE_CODES, UsageError, type FlagSpecs } from '../../config/args.js'
import { kvlogInProcess } from '../clients/run-cli.js'

const SPECS: FlagSpecs = {
  'data-dir': { type: 'string' },
  o: { type: 'string' },
  verbose: { type: 'boolean', negatable: true },
  help: { type: 'boolean' },
}

function usageError(argv: string[]): UsageError {
  try {
    parseCommandLine(argv, SPECS)
  } catch (err) {
    if (err instanceof UsageError) return err
    throw err
  }
  throw new Error(`${argv.join(' ')} parsed`)
}

describe('config/args: the command-line parser', () => {
  it('reads --flag value, --flag=value, -x value, booleans and positionals, in order', () => {
    const line = parseCommandLine(['a', '--data-dir', 'd', '-o', 'json', '--verbose', 'b', '--data-dir=e', '--', '--help'], SPECS)
    expect(line.flags.map((f) => [f.name, f.value, f.flag])).to.deep.equal([
      ['data-dir', 'd', '--data-dir'],
      ['o', 'json', '-o'],
      ['verbose', true, '--verbose'],
      ['data-dir', 'e', '--data-dir'],
    ])
    expect(line.positionals).to.deep.equal(['a', 'b', '--help'])
  })

  it('reads --no-NAME of a negatable boolean as false, and of nothing else', () => {
    expect(parseCommandLine(['--no-verbose'], SPECS).flags.map((f) => [f.name, f.value])).to.deep.equal([['verbose', false]])
    expect(usageError(['--no-verbose=1']).code).to.equal('BAD_VALUE')
    expect(usageError(['--no-help']).code).to.equal('UNKNOWN_FLAG')
    expect(usageError(['--no-data-dir']).code).to.equal('UNKNOWN_FLAG')
  })

  it('gives each mistake its code, naming the flag as written', () => {
    const unknown = usageError(['--data-dri', 'x'])
    expect([unknown.code, unknown.flag]).to.deep.equal(['UNKNOWN_FLAG', '--data-dri'])
    expect(unknown.message).to.contain('--data-dir') // the suggestion
    expect(usageError(['-x']).code).to.equal('UNKNOWN_FLAG')
    for (const argv of [['--data-dir'], ['--data-dir', '--verbose'], ['-o']]) {
      const err = usageError(argv)
      expect([err.code, err.flag]).to.deep.equal(['MISSING_VALUE', argv[0]])
    }
  })

  it("derives serve's flags from the config schema: one per setting, --config, booleans negatable", () => {
    const flags = settingFlags()
    expect(flags.config).to.deep.equal({ type: 'string' })
    expect(flags['data-dir']).to.deep.equal({ type: 'string' })
    const booleans = Object.values(flags).filter((f) => f.type === 'boolean')
    expect(booleans.length).to.be.greaterThan(0)
    for (const b of booleans) expect(b.negatable).to.equal(true)
  })

  it('lists every code in docs/errors.md with its meaning', () => {
    const docs = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8')
    for (const [code, meaning] of Object.entries(USAGE_CODES)) expect(docs).to.contain(`| \`${code}\` | ${meaning} |`)
  })

  it('answers an unknown flag with UNKNOWN_FLAG and exit 2 from serve, an offline tool and a client command', async () => {
    const cases: [string[], string][] = [
      [['serve', '--listen-htp', '127.0.0.1:0'], '--listen-htp'],
      [['import', '--form-etcd', 'x'], '--form-etcd'],
      [['snapshot', 'restore', 'f', '--data-dri', 'd'], '--data-dri'],
      [['export', '--etcd-snapshto', 'f'], '--etcd-snapshto'],
      [['get', 'k', '--prefx'], '--prefx'],
    ]
    for (const [argv, flag] of cases) {
      const r = await kvlogInProcess(argv, 'http://127.0.0.1:1')
      expect(r.code, argv.join(' ')).to.equal(2)
      expect(r.stderr, argv.join(' ')).to.match(new RegExp(`^kvlog ${argv[0]}: UNKNOWN_FLAG: unknown flag ${flag}\\b`))
    }
  })
})
