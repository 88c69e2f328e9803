/**
 * log/level/io/thread-priority.ts: lowerThreadPriority sets the calling thread's nice value, not the process's (the
 * kernel's view, /proc/thread-self/stat, in a worker thread and on the main thread), never lowers it, and
 * does nothing where a thread has no nice value of its own.
 */
import { expect } from 'chai'
import { once } from 'node:events'
import { getPriority } from 'node:os'
import { Worker } from 'node:worker_threads'
import { lowerThreadPriority, type ThreadPriority } from '../../../../log/level/io/thread-priority.js'
import { statNice, threadNice } from '../../../support/threads.js'

/** Calls lowerThreadPriority(n) for each n in a new worker thread: what each returned, and the thread's nice after. */
async function inWorker(nices: number[]): Promise<{ results: ThreadPriority[]; nice: number }> {
  const module = new URL('../../../../log/level/io/thread-priority.js', import.meta.url).href
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

  // Relative to the nice value this process runs at (threads start with their creator's), so that the
  // tests hold under `nice` too.
  it("sets the calling thread's nice value and leaves the main thread and the process as they were", async () => {
    const before = threadNice()
    const target = Math.min(19, before + 7)
    expect(target, 'room to raise the nice value').to.be.greaterThan(before)
    const { results, nice } = await inWorker([target])
    expect(results).to.deep.equal([{ nice: target }])
    expect(nice).to.equal(target)
    expect(threadNice()).to.equal(before)
    expect(getPriority(0)).to.equal(before)
    expect(getPriority(process.pid)).to.equal(before)
  })

  it('never lowers a nice value already higher', async () => {
    const before = threadNice()
    const high = Math.min(19, before + 9)
    const low = Math.min(high - 1, before + 4)
    expect(low, 'room to raise the nice value twice').to.be.greaterThan(before)
    const { results, nice } = await inWorker([high, low, high])
    expect(results).to.deep.equal([{ nice: high }, { nice: high }, { nice: high }])
    expect(nice).to.equal(high)
  })

  it('does nothing where threads have no nice value of their own', () => {
    const before = getPriority(0)
    const result = lowerThreadPriority(19, 'darwin')
    expect(result)
      .to.have.property('unchanged')
      .that.matches(/darwin/)
    expect(getPriority(0)).to.equal(before)
  })
})
