/**
 * What the CLI says about itself: every command's --help has a description of each of its flags, the
 * global flags and examples; `kvlog --version`; shell completion scripts for bash (run by a real bash,
 * completing commands, flags and verbs) and zsh (loaded from $fpath by a real zsh's compinit, completing the
 * same).
 */
import { spawnSync } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { COMMAND_HELP, GLOBAL_FLAGS } from '../../../clients/cli/help.js'
import { kvlog, kvlogInProcess } from '../run-cli.js'

const COMMANDS = [
  'put',
  'get',
  'del',
  'txn',
  'watch',
  'history',
  'diff',
  'dump',
  'revert',
  'compact',
  'status',
  'cursor',
  'lease',
  'snapshot',
  'completion',
]

describe('kvlog CLI: help, version and completion', function () {
  this.timeout(30_000)

  it("every command's --help describes each flag (its own and the global ones) and gives examples", async () => {
    const top = await kvlogInProcess(['--help'])
    expect(top.code).to.equal(0)
    for (const name of COMMANDS) {
      expect(top.stdout, name).to.match(new RegExp(`^  ${name} `, 'm'))
      const r = await kvlogInProcess([name, '--help'])
      expect(r.code, name).to.equal(0)
      expect(r.stdout).to.match(new RegExp(`^Usage: kvlog ${name}`))
      expect(r.stdout.split('\nExamples:\n')[1], name).to.match(/^ {2}.*\bkvlog /)
      // Every flag line has a description after the flag (the command table says which flags exist; one
      // without a description would show as a bare "--flag").
      const flagLines = r.stdout.split('\n').filter((l) => /^ {2}--/.test(l))
      for (const line of flagLines) expect(line, `${name}: ${line}`).to.match(/^ {2}--\S+( \S+)? +\S/)
      for (const flag of Object.keys(COMMAND_HELP[name].flags))
        expect(r.stdout, `${name} --${flag}`).to.match(new RegExp(`^  --${flag}\\b`, 'm'))
      for (const flag of Object.keys(GLOBAL_FLAGS)) expect(r.stdout, `${name} --${flag}`).to.match(new RegExp(`^  --${flag}\\b`, 'm'))
    }
    // -h works the same; a real process too.
    const h = await kvlog(['get', '-h'])
    expect(h.code).to.equal(0)
    expect(h.stdout).to.contain('--print-value-only')
  })

  it('kvlog --version and kvlog version print the package version', async () => {
    const pkg = JSON.parse(await readFile(new URL('../../../../package.json', import.meta.url), 'utf8')) as { version: string }
    const [a, b] = [await kvlog(['--version']), await kvlog(['version'])]
    expect([a.code, b.code]).to.deep.equal([0, 0])
    expect(a.stdout).to.equal(`kvlog ${pkg.version}\n`)
    expect(b.stdout).to.equal(a.stdout)
  })

  it('completion bash: a real bash completes commands, flags and verbs', async () => {
    const script = await kvlog(['completion', 'bash'])
    expect(script.code).to.equal(0)
    const complete = (line: string) => {
      const words = line.split(' ')
      const sh = `${script.stdout}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _kvlog; printf '%s\\n' "\${COMPREPLY[@]}"`
      const r = spawnSync('bash', ['-c', sh], { encoding: 'utf8' })
      expect(r.status, r.stderr).to.equal(0)
      return r.stdout.split('\n').filter((w) => w !== '')
    }
    expect(complete('kvlog hi')).to.deep.equal(['history'])
    expect(complete('kvlog s')).to.have.members(['serve', 'snapshot', 'status'])
    expect(complete('kvlog watch /a --cu')).to.deep.equal(['--cursor'])
    expect(complete('kvlog get /a --print')).to.deep.equal(['--print-value-only'])
    expect(complete('kvlog get /a --endp')).to.have.members(['--endpoint', '--endpoints'])
    expect(complete('kvlog lease k')).to.deep.equal(['keep-alive'])
  })

  it('completion zsh: a real zsh loads it from $fpath (compinit registers it) and completes commands, flags, verbs and files', async () => {
    const z = await kvlog(['completion', 'zsh'])
    expect(z.code).to.equal(0)
    expect(z.stdout.split('\n')[0]).to.equal('#compdef kvlog')
    const dir = await mkdtemp(join(tmpdir(), 'kvlog-zsh-'))
    try {
      // Installed as the script says: _kvlog in a directory on $fpath, then compinit. compadd and _files only
      // work inside a completion widget, so they are replaced by functions that print what they would offer
      // (compadd filtered by the word being completed, as the completion system matches).
      await mkdir(join(dir, 'functions'))
      await writeFile(join(dir, 'functions', '_kvlog'), z.stdout)
      const lines = ['kvlog hi', 'kvlog s', 'kvlog lease k', 'kvlog watch /a --cu', 'kvlog dump --p', 'kvlog put /a --file ', 'kvlog ']
      const sh = [
        `fpath=(${dir}/functions $fpath)`,
        `autoload -U compinit && compinit -u -d ${dir}/zcompdump`,
        'print -r -- "registered ${_comps[kvlog]}"',
        'compadd() { [[ $1 == -- ]] && shift; local w; for w in "$@"; do [[ $w == ${words[CURRENT]}* ]] && print -r -- "$w"; done; return 0 }',
        "_files() { print -r -- '(files)' }",
        'complete() { words=("${(@s: :)1}"); CURRENT=${#words}; print -r -- "== $1"; _kvlog }',
        ...lines.map((l) => `complete '${l}'`),
      ].join('\n')
      const r = spawnSync('zsh', ['-f', '-c', sh], { encoding: 'utf8' })
      expect(r.error, 'zsh is not installed (apt-get install zsh)').to.equal(undefined)
      expect(r.status, r.stderr).to.equal(0)
      expect(r.stderr).to.equal('')
      const [head, ...blocks] = r.stdout.split('== ')
      expect(head.trim()).to.equal('registered _kvlog')
      const offered = new Map(
        blocks.map((b) => [
          b.split('\n')[0],
          b
            .split('\n')
            .slice(1)
            .filter((w) => w !== ''),
        ]),
      )
      expect(offered.get('kvlog hi')).to.deep.equal(['history'])
      expect(offered.get('kvlog s')).to.have.members(['serve', 'snapshot', 'status'])
      expect(offered.get('kvlog lease k')).to.deep.equal(['keep-alive'])
      expect(offered.get('kvlog watch /a --cu')).to.deep.equal(['--cursor'])
      expect(offered.get('kvlog dump --p')).to.have.members(['--prefix', '--password'])
      expect(offered.get('kvlog put /a --file ')).to.deep.equal(['(files)'])
      expect(offered.get('kvlog ')).to.include.members(COMMANDS).and.include.members(['--help', '--version'])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
    const bad = await kvlog(['completion', 'fish'])
    const none = await kvlog(['completion'])
    expect([bad.code, none.code]).to.deep.equal([2, 2])
  })
})
