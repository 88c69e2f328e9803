/**
 * A write forwarded to a leader that stopped (SIGSTOP: its process and NATS connection stay, so it is
 * waited out by its lease), with three real `kvlog serve` members: once the member the write went through
 * sees the new leader, the write ends with OUTCOME_UNKNOWN (the stopped leader may still publish it, or
 * not) instead of waiting out its forward's timeout, and the member's next write goes to the new leader.
 * Checked by order, not by time: the first write has its answer before a write sent after the new leader
 * was seen is acknowledged.
 */
import { expect } from 'chai'
import { startMembers, waitReady, type ClusterProcesses, type Member } from '../../support/cluster-processes.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { sleep } from '../../support/wait.js'

describe('kvlog cluster: a write in flight to a stopped leader (3 nats-servers, 3 kvlog serve processes)', function () {
  this.timeout(180_000)
  let nats: NatsCluster
  let cluster: ClusterProcesses
  let stopped: number | undefined

  before(async function () {
    this.timeout(120_000)
    nats = await startNatsCluster()
    cluster = await startMembers(nats, 'stopped')
    for (const m of cluster.members) await waitReady(m)
  })
  after(async function () {
    this.timeout(60_000)
    if (stopped !== undefined) process.kill(cluster.members[stopped].proc!.child.pid!, 'SIGCONT')
    await cluster?.cleanup()
    await nats?.stop()
  })

  const leaderSeenBy = async (m: Member): Promise<string> =>
    ((await (await fetch(`${m.http}/v1/status`)).json()) as { cluster: { leader: string } }).cluster.leader
  const put = async (m: Member, key: string): Promise<{ status: number; code: string }> => {
    const res = await fetch(`${m.http}/v1/kv`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key, value: 'x' }),
    })
    const body = (await res.json()) as { error?: { code: string } }
    return { status: res.status, code: body.error?.code ?? '' }
  }

  it('ends it OUTCOME_UNKNOWN once the new leader is seen, before the next write is acknowledged', async () => {
    const { members } = cluster
    const leaderName = await leaderSeenBy(members[0])
    const li = members.findIndex((m) => m.name === leaderName)
    const via = members[(li + 1) % 3]
    expect((await put(via, '/before')).status).to.equal(200)

    stopped = li
    process.kill(members[li].proc!.child.pid!, 'SIGSTOP')
    let firstAnswer: { status: number; code: string } | undefined
    const first = put(via, '/in-flight').then((r) => (firstAnswer = r))
    const deadline = Date.now() + 60_000
    while ((await leaderSeenBy(via)) === leaderName) {
      expect(Date.now(), 'a new leader').to.be.below(deadline)
      await sleep(50)
    }
    const next = await put(via, '/after')
    expect(next.status).to.equal(200)
    expect(firstAnswer, 'the first write answered before the next one was acknowledged').to.deep.equal({
      status: 504,
      code: 'OUTCOME_UNKNOWN',
    })
    await first
    process.kill(members[li].proc!.child.pid!, 'SIGCONT')
    stopped = undefined
  })
})
