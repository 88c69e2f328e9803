/**
 * The innocent bystanders of a bad-input test: while hostile input hits a server, a control client keeps
 * writing under /control/ (every write must succeed, promptly) and a control watch follows /control/ (its
 * stream is checked exactly against the server's history at the end). The server's memory is sampled.
 *
 *   const b = await Bystanders.start(server)
 *   ... hostile input ...
 *   await b.finish()   // asserts: no failed or slow control write, the watch is exact, memory bounded
 */
import { expect } from 'chai'
import { readFile } from 'node:fs/promises'
import { performance } from 'node:perf_hooks'
import { checkWatches, Oracle } from '../../apiserver/watch/checker.js'
import type { ServerProcess } from '../../support/server-process.js'
import { sleep, WatchConnection } from '../../support/watch-client.js'

/** The server's resident memory, bytes (Linux /proc). */
export async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)
  return kb === null ? 0 : Number(kb[1]) * 1024
}

export class Bystanders {
  readonly failures: string[] = []
  writes = 0
  slowest = 0
  peakRss = 0
  private stopped = false
  private loop: Promise<void> = Promise.resolve()

  private constructor(
    private readonly server: ServerProcess,
    private readonly conn: WatchConnection,
    private readonly watchId: number,
    private readonly start: number,
    readonly baselineRss: number,
  ) {}

  static async start(server: ServerProcess): Promise<Bystanders> {
    const status = (await (await fetch(`${server.http}/v1/status`)).json()) as { revision: number }
    const conn = await WatchConnection.connect(server.http, 'control')
    const start = status.revision + 1
    const id = await conn.createAndWait({ key: '/control/', prefix: true, prevKv: true, startRevision: start })
    const b = new Bystanders(server, conn, id, start, await rssBytes(server.child.pid!))
    b.loop = b.run()
    return b
  }

  private async run(): Promise<void> {
    let i = 0
    while (!this.stopped) {
      const t = performance.now()
      try {
        const res = await fetch(`${this.server.http}/v1/kv`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ key: `/control/k${i % 10}`, value: `v${i}` }),
          signal: AbortSignal.timeout(10_000),
        })
        await res.text()
        if (res.status !== 200) this.failures.push(`control put ${i}: ${res.status}`)
      } catch (err) {
        this.failures.push(`control put ${i}: ${String(err)}`)
      }
      this.slowest = Math.max(this.slowest, performance.now() - t)
      this.writes++
      i++
      this.peakRss = Math.max(this.peakRss, await rssBytes(this.server.child.pid!).catch(() => 0))
      await sleep(25)
    }
  }

  /** Stops the control writer; asserts the bystanders were not hurt. */
  async finish(options: { maxLatencyMs?: number; maxRssGrowthBytes?: number } = {}): Promise<void> {
    this.stopped = true
    await this.loop
    expect(this.failures, 'control writes').to.deep.equal([])
    expect(this.writes, 'control writes made').to.be.greaterThan(5)
    // Generous: one writer serializes every write, so a huge legal request (a delete of 25,600 keys in one
    // revision) holds the others for its duration, and the machine may be shared.
    expect(this.slowest, 'slowest control write, ms').to.be.below(options.maxLatencyMs ?? 10_000)
    const growth = this.peakRss - this.baselineRss
    expect(growth, `server memory grew from ${this.baselineRss} to ${this.peakRss} bytes`).to.be.below(
      options.maxRssGrowthBytes ?? 256 * 1024 * 1024,
    )
    const oracle = new Oracle(2)
    const last = await oracle.fetch(this.server.http)
    this.conn.requestProgress()
    const list = this.conn.messagesFor(this.watchId)
    await this.conn.waitFor(
      () => list.some((m) => m.msg.type === 'progress' && (m.msg.revision ?? 0) >= last),
      10_000,
      'the control watch to reach the head',
    )
    const violations = checkWatches(
      oracle,
      [
        {
          name: 'control',
          spec: { key: '/control/', prefix: true, prevKv: true },
          segments: [{ startRevision: this.start, messages: list }],
        },
      ],
      { finalRevision: last },
    )
    expect(violations, 'the control watch').to.deep.equal([])
    this.conn.terminate()
  }
}
