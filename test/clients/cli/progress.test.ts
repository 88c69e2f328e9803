/** The CLI's progress bar: drawn on a terminal only, never in CI or into a pipe; the line it draws. */
import { expect } from 'chai'
import { progressBar, rateBar, renderProgress, renderRate, size } from '../../../clients/cli/progress.js'

function fakeStream(isTTY: boolean) {
  const writes: string[] = []
  return { isTTY, columns: 60, writes, write: (t: string) => writes.push(t) }
}

describe('CLI progress bar', () => {
  it('renders a bar within the width, capped at 99% past an estimate until done', () => {
    const half = renderProgress('snap', 50, 100, 60)
    expect(half.length).to.be.at.most(60)
    expect(half).to.match(/^snap \[#+\.+\]\s+50%\s+50 B \/ 100 B$/)
    expect(renderProgress('snap', 150, 100, 60))
      .to.contain(' 99%')
      .and.contain('150 B / 150 B')
    expect(renderProgress('snap', 100, 100, 60))
      .to.contain('100%')
      .and.not.contain('.')
    expect(renderProgress('snap', 5, 0, 60)).to.equal('snap [' + '.'.repeat(60 - 'snap'.length - 3 - '  5 B'.length) + ']  5 B')
    expect(size(3 * 1024 * 1024)).to.equal('3.0 MiB')
  })

  it('draws on a TTY, and nothing when stderr is not a terminal or CI is set', () => {
    const tty = fakeStream(true)
    const bar = progressBar('x', 10, tty, {})
    bar.update(5)
    bar.done()
    expect(tty.writes.length).to.be.at.least(2)
    expect(tty.writes[0].startsWith('\r')).to.equal(true)
    expect(tty.writes.at(-1)).to.equal('\n')
    for (const [stream, env] of [
      [fakeStream(false), {}],
      [fakeStream(true), { CI: 'true' }],
    ] as const) {
      const quiet = progressBar('x', 10, stream, env)
      quiet.update(5)
      quiet.done()
      expect(stream.writes).to.deep.equal([])
    }
  })

  it('counts units with a rate and an ETA (import progress), drawn on the same terms', () => {
    const line = renderRate('importing', 500, 2000, 'revisions', 2000, 100)
    expect(line.length).to.be.at.most(100)
    expect(line).to.match(/^importing \[#+\.+\]\s+25%\s+500 \/ 2000 revisions\s+250\/s\s+ETA 6s$/)
    expect(renderRate('importing', 2000, 2000, 'revisions', 4000, 100))
      .to.contain('100%')
      .and.not.contain('ETA')
    const tty = fakeStream(true)
    const bar = rateBar('x', 10, 'revisions', tty, {})
    bar.update(5)
    bar.done()
    expect(tty.writes.at(-1)).to.equal('\n')
    const quiet = fakeStream(true)
    rateBar('x', 10, 'revisions', quiet, { CI: '1' }).update(5)
    expect(quiet.writes).to.deep.equal([])
  })
})
