/**
 * `kvlog txn --help`'s examples run as written, through a shell, against a real server: the piped JSON
 * request creates /a once (its compare holds only while /a does not exist), and the same request from a
 * file then finds the compare false.
 */
import { spawnSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { expect } from 'chai'
import { KvlogClient } from '../../../clients/index.js'
import { COMMAND_HELP } from '../../../clients/cli/help.js'
import { KVLOG_BIN, startServerProcess, type ServerProcess } from '../../support/server-process.js'

describe('kvlog CLI: txn --help examples', function () {
  this.timeout(60_000)
  let server: ServerProcess
  let tmp: string

  before(async () => {
    server = await startServerProcess()
    tmp = await mkdtemp(join(tmpdir(), 'kvlog-txn-example-'))
  })
  after(async () => {
    await server?.cleanup()
    if (tmp) await rm(tmp, { recursive: true, force: true })
  })

  const sh = (line: string) =>
    spawnSync('sh', ['-c', `${line} -o json`], {
      cwd: tmp,
      encoding: 'utf8',
      env: { ...process.env, PATH: `${dirname(KVLOG_BIN)}:${process.env.PATH ?? ''}`, KVLOG_ENDPOINT: server.http },
    })

  it('the piped example succeeds and writes /a; the file example with the same request finds /a exists', async () => {
    const [piped, fromFile] = COMMAND_HELP.txn.examples
    const request = /^echo '(.*)' \| kvlog txn$/.exec(piped)?.[1]
    expect(request, piped).to.be.a('string')
    const first = sh(piped)
    expect(first.status, first.stderr).to.equal(0)
    expect(JSON.parse(first.stdout).succeeded).to.equal(true)
    const kv = await new KvlogClient({ endpoint: server.http }).get('/a')
    expect(kv?.value.toString()).to.equal('1')
    await writeFile(join(tmp, 'request.json'), request!)
    const second = sh(fromFile)
    expect(second.status, second.stderr).to.equal(0)
    expect(JSON.parse(second.stdout).succeeded).to.equal(false)
  })
})
