/**
 * `kvlog compact` on a real terminal (a pseudo-terminal): when the compaction would expire a consumer
 * cursor it names the cursor and asks; "n" (or anything but y/yes) compacts nothing and exits 1, "y"
 * compacts and the cursor is expired. Without a terminal it refuses without asking
 * (input-output.test.ts).
 */
import { expect } from 'chai'
import { KvlogClient } from '../../../clients/index.js'
import { runOnPty } from '../../support/pty.js'
import { KVLOG_BIN, startServerProcess, type ServerProcess } from '../../support/server-process.js'

const PROMPT = 'Compact anyway? [y/N]'

describe('kvlog compact: the confirmation on a terminal (real pty, real server)', function () {
  this.timeout(90_000)
  let server: ServerProcess
  let kv: KvlogClient

  before(async () => {
    server = await startServerProcess()
    kv = new KvlogClient({ endpoint: server.http })
  })

  after(async () => {
    await server?.cleanup()
  })

  const compactOnTty = (target: number, answer: string) =>
    runOnPty([process.execPath, KVLOG_BIN, 'compact', String(target)], {
      env: { KVLOG_ENDPOINT: server.http },
      prompt: PROMPT,
      answer,
    })

  it('asks before expiring a cursor: n compacts nothing (exit 1), y compacts and expires it (exit 0)', async () => {
    const slow = (await kv.put('/tty/a', '1')).revision
    await kv.commitCursor('tty-slow', slow)
    await kv.put('/tty/a', '2')
    const target = (await kv.put('/tty/a', '3')).revision
    const floor = (await kv.status()).compactRevision

    const no = await compactOnTty(target, 'n')
    expect(no.asked, no.output).to.equal(true)
    expect(no.code, no.output).to.equal(1)
    expect(no.output).to.contain(`would expire 1 consumer cursor(s): tty-slow (at revision ${slow})`).and.contain('--force')
    expect((await kv.status()).compactRevision).to.equal(floor)
    expect((await kv.cursors()).find((c) => c.name === 'tty-slow')?.expired).to.equal(false)

    const yes = await compactOnTty(target, 'y')
    expect(yes.asked, yes.output).to.equal(true)
    expect(yes.code, yes.output).to.equal(0)
    expect(yes.output).to.match(new RegExp(`compacted to revision ${target}: removed \\d+ revisions`))
    expect((await kv.status()).compactRevision).to.equal(target)
    expect((await kv.cursors()).find((c) => c.name === 'tty-slow')?.expired).to.equal(true)
  })
})
