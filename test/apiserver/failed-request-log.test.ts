/**
 * FailedRequestLog: one budget of lines a second for every logger it limits; lines over it are counted and
 * the count logged as one warn line when the second ends (or at flush).
 */
import { expect } from 'chai'
import { FailedRequestLog, type LineLogger } from '../../apiserver/failed-request-log.js'
import { waitFor } from '../support/wait.js'

interface Line {
  level: 'info' | 'warn'
  fields: object
  message: string
}

function recorder(): { logger: LineLogger; lines: Line[] } {
  const lines: Line[] = []
  return {
    lines,
    logger: {
      info: (fields, message) => lines.push({ level: 'info', fields, message }),
      warn: (fields, message) => lines.push({ level: 'warn', fields, message }),
    },
  }
}

describe('apiserver/failed-request-log', () => {
  it('writes at most perSecond lines a second, shared by every limited logger, and counts the rest', () => {
    let now = 10_000
    const budget = new FailedRequestLog(3, () => now)
    const http = recorder()
    const etcd = recorder()
    const a = budget.limited(http.logger)
    const b = budget.limited(etcd.logger)
    for (let i = 0; i < 4; i++) a.info({ i }, 'request failed')
    for (let i = 0; i < 4; i++) b.warn({ i }, 'request failed')
    expect(http.lines.map((l) => l.fields)).to.deep.equal([{ i: 0 }, { i: 1 }, { i: 2 }])
    expect(etcd.lines).to.deep.equal([])
    // The next second: the count of the one before is logged first, then the budget is whole again.
    now += 1000
    a.info({ i: 9 }, 'request failed')
    expect(etcd.lines).to.deep.equal([{ level: 'warn', fields: { notLogged: 5, perSecond: 3 }, message: 'failed requests not logged' }])
    expect(http.lines.at(-1)).to.deep.equal({ level: 'info', fields: { i: 9 }, message: 'request failed' })
    budget.flush()
    expect(etcd.lines).to.have.length(1)
    expect(http.lines).to.have.length(4)
  })

  it('perSecond 0 writes every line', () => {
    const budget = new FailedRequestLog(0, () => 0)
    const r = recorder()
    const limited = budget.limited(r.logger)
    for (let i = 0; i < 1000; i++) limited.warn({ i }, 'request failed')
    budget.flush()
    expect(r.lines).to.have.length(1000)
  })

  it('logs the count when the second ends, with no further request to trigger it', async () => {
    const budget = new FailedRequestLog(1)
    const r = recorder()
    const limited = budget.limited(r.logger)
    for (let i = 0; i < 5; i++) limited.info({ i }, 'request failed')
    expect(r.lines).to.have.length(1)
    // The second ends by a timer, which a busy machine may run late: waited for, not timed.
    await waitFor('the count logged when the second ends', () => r.lines.length > 1)
    expect(r.lines).to.have.length(2)
    expect(r.lines.at(-1)).to.deep.equal({ level: 'warn', fields: { notLogged: 4, perSecond: 1 }, message: 'failed requests not logged' })
  })
})
