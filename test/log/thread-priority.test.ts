/**
 * log/thread-priority.ts: lowerThreadPriority sets the calling thread's nice value, not the process's (the
 * kernel's view, /proc/thread-self/stat, in a worker thread and on the main thread), never lowers it, and
 * does nothing where a thread has no nice value of its own.
 */
import { expect } from 'chai'
import { once } from 'node:events'
import { getPriority } from 'node:os'
import { Worker } from 'node:worker_threads'
import { lowerThreadPriority, type ThreadPriority } from '../../log/thread-priority.js'
import { statNice, threadNice } from '../support/threads.js'

/** Calls lowerThreadPriority(n) for each n in a new worker thread: what each returned, and the thread's nice after. */
async function inWorker(nices: number[]): Promise<{ results: ThreadPriority[]; nice: number }> {
  const module = new URL('../../log/thread-priority.js', import.meta.url).href
  const code = `
    const { parentPort, workerData } = require('node:worker_threads')
    const { readFileSync } = require('node:fs')
    import(workerData.module).then(({ lowerThreadPriority }) => {
      const results = workerData.nices.map((n) => lowerThreadPriority(n))
      parentPort.postMessage({ results, stat: readFileSync('/proc/thread-self/stat', 'utf8') })
    })`
  const worker = new Worker(code, { eval: true, workerData: { module, nices } })
  const [m] = (await once(worker, 'message')) as [{ results: ThreadPriority[]; stat: string }]
  await worker.terminate()
  return { results: m.results, nice: statNice(m.stat) }
}

describe('log/thread-priority: a thread lowers its own CPU priority', function () {
  this.timeout(10_000)

  it('sets the calling thread nice value and leaves the main thread and the process as they were', async () => {
    const before = threadNice()
    const { results, nice } = await inWorker([7])
    expect(results).to.deep.equal([{ nice: 7 }])
    expect(nice).to.equal(7)
    expect(threadNice()).to.equal(before)
    expect(getPriority(0)).to.equal(before)
    expect(getPriority(process.pid)).to.equal(before)
  })

  it('never lowers a nice value already higher', async () => {
    const { results, nice } = await inWorker([9, 4, 9])
    expect(results).to.deep.equal([{ nice: 9 }, { nice: 9 }, { nice: 9 }])
    expect(nice).to.equal(9)
  })

  it('does nothing where threads have no nice value of their own', () => {
    const before = getPriority(0)
    const result = lowerThreadPriority(19, 'darwin')
    expect(result).to.have.property('unchanged').that.matches(/darwin/)
    expect(getPriority(0)).to.equal(before)
  })
})
