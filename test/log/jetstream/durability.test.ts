/**
 * Majority-durable acknowledgements and tail refill, with in-process members over three real
 * nats-servers:
 * - a write is acknowledged only once a majority of the roster has it fsynced: with two of three
 *   members closed it fails OUTCOME_UNKNOWN, and succeeds again once one comes back;
 * - a stream that lost every message (deleted and made again) is refilled by the next leader from the
 *   members' kept copies, the same bytes at the same sequences, before it takes writes;
 * - the leader that finds the stream lost its tail waits for every member, so a message only the last
 *   member to come back holds (published, never acknowledged) comes back too and no copy forks;
 * - when the members' kept tail is shorter than what the stream lost, no member takes writes and none
 *   forks: their copies stay as they were.
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from 'nats'
import { openJetStreamLog, type JetStreamLog } from '../../../log/jetstream/jetstream-log.js'
import { clusterNames, type JetStreamLogOptions } from '../../../log/jetstream/options.js'
import { memberOptions } from '../../support/cluster-members.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { waitFor } from '../../support/wait.js'

/** What a write fails with while no member takes writes, or the log does not answer. */
const RETRYABLE = new Set(['UNAVAILABLE', 'NOT_APPLIED', 'OUTCOME_UNKNOWN'])

describe('JetStreamLog: durable acknowledgements and tail refill', function () {
  this.timeout(90_000)
  let nats: NatsCluster
  let dir: string
  const open = new Set<JetStreamLog>()
  before(async () => {
    nats = await startNatsCluster()
    dir = await mkdtemp(join(tmpdir(), 'kvlog-js-durable-'))
  })
  after(async () => {
    for (const log of open) await log.close().catch(() => undefined)
    await nats?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  const start = async (cluster: string, name: string, extra: Partial<JetStreamLogOptions> = {}, lines?: string[]) => {
    const log = await openJetStreamLog(
      memberOptions(nats.urls, cluster, name, join(dir, cluster, name), {
        natsReplicas: 1,
        clusterRequestTimeout: 3000,
        ...(lines ? { log: (line: string) => void lines.push(line) } : {}),
        ...extra,
      }),
    )
    open.add(log)
    return log
  }
  const close = async (log: JetStreamLog) => {
    open.delete(log)
    await log.close()
  }
  /** Three members a, b, c; with `aLeads`, a is the leader (started alone first). */
  const startThree = async (cluster: string, extra: Partial<JetStreamLogOptions> = {}, lines?: string[], aLeads = false) => {
    const a = await start(cluster, 'a', extra, lines)
    if (aLeads) await waitFor('a to lead', () => a.isLeading, 20_000)
    const logs = [a, await start(cluster, 'b', extra, lines), await start(cluster, 'c', extra, lines)]
    await waitFor(
      'all three on the roster',
      () => logs.every((l) => (l as unknown as { applier: { roster: string[] } }).applier.roster.length === 3),
      30_000,
    )
    return logs
  }
  const deleteStream = async (cluster: string) => {
    const nc = await connect({ servers: nats.urls.split(',') })
    try {
      await (await nc.jetstreamManager()).streams.delete(clusterNames(cluster).stream)
    } finally {
      await nc.close()
    }
  }
  const code = async (p: Promise<unknown>): Promise<string | undefined> =>
    p.then(
      () => undefined,
      (err: { code?: string }) => err.code ?? 'none',
    )

  it('acknowledges a write only once a majority of the members has it fsynced', async () => {
    const [a, b, c] = await startThree('maj', {}, undefined, true)
    await a.put('k', '1')
    expect(a.metrics.durableWait.count).to.be.above(0)
    await close(b)
    await a.put('k', '2') // a and c: two of three
    await close(c)
    expect(a.isLeading).to.equal(true)
    // Published and applied by the leader, but fsynced by one member of three: not acknowledged.
    expect(await code(a.put('k', '3'))).to.equal('OUTCOME_UNKNOWN')
    expect((await a.get('k', { serializable: true }))?.value.toString()).to.equal('3')
    const b2 = await start('maj', 'b')
    await b2.put('k', '4')
    expect((await b2.get('k'))?.value.toString()).to.equal('4')
    expect((await a.get('k'))?.version).to.equal(4) // the unacknowledged write is in the log all the same
  })

  it('refills a stream that lost its messages from the members, at the same sequences, before taking writes', async () => {
    const lines: string[] = []
    let logs = await startThree('refill', {}, lines)
    for (let i = 0; i < 20; i++) await logs[i % 3].put(`r/${i}`, `v${i}`)
    const before = await logs[0].range('r/', { rangeEnd: 'r0' })
    const revision = logs[0].revision
    for (const l of logs) await close(l)
    await deleteStream('refill')

    logs = await startThree('refill', {}, lines)
    // The members elect a leader (a fresh lease), which refills the stream, then takes writes.
    const deadline = Date.now() + 30_000
    let r: { revision: number } | undefined
    while (r === undefined) {
      r = await logs[1].put('r/next', 'n').catch((err: { code?: string }) => {
        if (!RETRYABLE.has(err.code ?? '') || Date.now() > deadline) throw err
        return undefined
      })
    }
    expect(r.revision).to.equal(revision + 1)
    for (const l of logs) {
      const now = await l.range('r/', { rangeEnd: 'r0' })
      expect(now.kvs.filter((kv) => kv.key.toString() !== 'r/next')).to.deep.equal(before.kvs)
    }
    expect(lines.some((l) => /republished stream messages 1\.\.\d+/.test(l))).to.equal(true)
  })

  it('waits for every member once the stream lost its tail: the one that alone holds the last message brings it back, and nothing forks', async () => {
    const lines: string[] = []
    // Long enough for the last member to start while the leader surveys; the grace after a majority is 200 ms.
    const extra = { clusterRequestTimeout: 8000 }
    let [a, b, c] = await startThree('late', extra, lines, true)
    for (let i = 0; i < 6; i++) await a.put(`l/${i}`, `v${i}`)
    await close(b)
    await close(c)
    // Published and applied by a alone: never acknowledged, yet a's copy holds it.
    expect(await code(a.put('l/alone', 'x'))).to.equal('OUTCOME_UNKNOWN')
    const aloneRevision = a.revision
    await close(a)
    await deleteStream('late')

    // b and c (a majority) come back together; a only once one of them has begun a takeover (its survey).
    const mark = lines.length
    ;[b, c] = await Promise.all([start('late', 'b', extra, lines), start('late', 'c', extra, lines)])
    const takingOver = () => {
      const events = lines.slice(mark).filter((l) => /kvlog: [bc] (leads cluster|could not take over|accepts writes)/.test(l))
      return events.at(-1)?.includes('leads cluster') === true
    }
    await waitFor('b or c to begin a takeover', takingOver, 20_000)
    a = await start('late', 'a', extra, lines)
    const deadline = Date.now() + 30_000
    let r: { revision: number } | undefined
    while (r === undefined) {
      r = await b.put('l/next', 'n').catch((err: { code?: string }) => {
        if (!RETRYABLE.has(err.code ?? '') || Date.now() > deadline) throw err
        return undefined
      })
    }
    expect(r.revision, 'the next write follows the message a alone held').to.equal(aloneRevision + 1)
    expect(lines.some((l) => /republished stream messages 1\.\.\d+ from a's copy/.test(l))).to.equal(true)
    for (const l of [a, b, c]) {
      const now = await l.range('l/', { rangeEnd: 'l0' })
      expect(now.kvs.map((kv) => kv.key.toString())).to.include.members(['l/alone', 'l/next'])
    }
    expect(lines.filter((l) => /stopped applying/.test(l))).to.deep.equal([])
  })

  it('takes no writes, and forks nothing, when the stream lost more than the members keep', async () => {
    const lines: string[] = []
    let logs = await startThree('short', { clusterTailMessages: 4 }, lines)
    for (let i = 0; i < 12; i++) await logs[i % 3].put(`s/${i}`, `v${i}`)
    const revisions: number[] = []
    for (const l of logs) {
      await close(l)
      revisions.push(l.revision)
    }
    await deleteStream('short')

    logs = [await start('short', 'a', { clusterTailMessages: 4 }, lines), await start('short', 'b', { clusterTailMessages: 4 }, lines)]
    // No member takes writes: refused before anything reached the log.
    expect(await code(logs[0].put('s/next', 'n'))).to.equal('NOT_APPLIED')
    await waitFor('a refusal line', () => lines.some((l) => /cannot be republished/.test(l)), 20_000)
    logs.forEach((l, i) => {
      expect(l.revision).to.equal(revisions[i])
      expect(l.isLeading).to.equal(false)
    })
  })
})
