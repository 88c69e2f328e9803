/**
 * stopProcess (stopped.ts): once it resolves, every thread of a busy process with several threads is
 * stopped and the process uses no CPU until SIGCONT; afterwards it runs again.
 */
import { expect } from 'chai'
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { stopProcess, threadStates } from './stopped.js'
import { waitUntil } from './wait.js'

/** A node process whose main thread and three worker threads spin. */
const BUSY = `
const { Worker } = require('node:worker_threads')
for (let i = 0; i < 3; i++) new Worker('for (;;) {}', { eval: true })
console.log('spinning')
for (;;) {}
`

/** The CPU time process `pid` used, in clock ticks (utime + stime of /proc/<pid>/stat). */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}

describe('test support: stopProcess', function () {
  this.timeout(60_000)
  let child: ChildProcess | undefined

  afterEach(() => {
    child?.kill('SIGKILL')
    child = undefined
  })

  it('resolves once every thread has stopped; the process then runs nothing until SIGCONT', async () => {
    const proc = spawn(process.execPath, ['-e', BUSY], { stdio: ['ignore', 'pipe', 'inherit'] })
    child = proc
    await new Promise<void>((resolve) => proc.stdout.once('data', () => resolve()))
    const pid = proc.pid!
    expect(threadStates(pid).length).to.be.at.least(4)

    expect(await stopProcess(pid, 'the busy process')).to.equal(true)
    expect(threadStates(pid).every((s) => s === 'T')).to.equal(true)
    const stoppedAt = cpuTicks(pid)
    // A few scheduler ticks later, still no CPU used.
    await new Promise((r) => setTimeout(r, 300))
    expect(cpuTicks(pid)).to.equal(stoppedAt)

    proc.kill('SIGCONT')
    await waitUntil('the process to run again', () => Promise.resolve(cpuTicks(pid) > stoppedAt), 30_000)
  })
})
