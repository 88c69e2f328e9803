/**
 * Every stream message names the digest of the one before it; a member applies a message only if that is
 * the last one it applied. A message that follows another history (as after a stream lost its tail and
 * was written again) stops the member instead of forking its copy: reads fail UNAVAILABLE, the message's
 * writes are not applied, and the member reports itself not caught up. It says which message broke the
 * chain (its epoch and id) and what the stream holds before it beside what the member applied there.
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from 'nats'
import { openJetStreamLog, type JetStreamLog } from '../../../log/jetstream/jetstream-log.js'
import { encode, type LogMessage } from '../../../log/jetstream/messages.js'
import { clusterNames } from '../../../log/jetstream/options.js'
import { memberOptions } from '../../support/cluster-members.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { rejectionWithCode } from '../../support/rejection.js'
import { waitFor } from '../../support/wait.js'

describe('JetStreamLog: the message chain', function () {
  this.timeout(180_000)
  let nats: NatsCluster
  let dir: string
  const logs: JetStreamLog[] = []
  before(async () => {
    nats = await startNatsCluster()
    dir = await mkdtemp(join(tmpdir(), 'kvlog-js-chain-'))
  })
  after(async () => {
    for (const log of logs) await log.close().catch(() => undefined)
    await nats?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('stops a member at a message that does not follow its copy, without applying it', async () => {
    const name = 'chain'
    const a = await openJetStreamLog(memberOptions(nats.urls, name, 'a', join(dir, 'a'), { natsReplicas: 1 }))
    logs.push(a)
    await waitFor('a leader', () => a.isLeading, 40_000)
    const said: string[] = []
    const b = await openJetStreamLog(
      memberOptions(nats.urls, name, 'b', join(dir, 'b'), { natsReplicas: 1, log: (line) => said.push(line) }),
    )
    logs.push(b)
    await b.put('x', '1')
    // Caught up once it has applied what the stream holds (the members' joins may still be arriving).
    const deadline = Date.now() + 40_000
    while (!(await b.caughtUp()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    const applier = (b as unknown as { applier: { applied: number; streamLast: number; failure?: Error } }).applier
    expect(
      await b.caughtUp(),
      `b applied ${applier.applied} of ${applier.streamLast} (${String(applier.failure ?? 'applying')}); it said:\n${said.join('\n')}`,
    ).to.equal(true)
    const revision = b.revision

    const foreign: LogMessage = {
      v: 1,
      ts: Date.now(),
      epoch: 999,
      prev: 'another-history',
      cmds: [{ rid: 'x.1', cmd: { type: 'txn', request: { success: [{ type: 'put', key: 'evil', value: '1' }] } } }],
    }
    const nc = await connect({ servers: nats.urls.split(',') })
    const last = (await (await nc.jetstreamManager()).streams.info(clusterNames(name).stream)).state.last_seq
    await nc.jetstream().publish(clusterNames(name).subject, encode(foreign), { msgID: 'foreign.1' })
    await nc.close()

    await waitFor('b to stop', () => b.view.revision === revision && applier.failure !== undefined, 40_000)
    expect(await b.caughtUp()).to.equal(false)
    expect(await b.get('evil', { serializable: true })).to.equal(undefined)
    expect(b.revision).to.equal(revision)
    await rejectionWithCode(b.get('x'), 'UNAVAILABLE', 'a linearizable read on a stopped member')
    // The member says who published the message that broke the chain, and what the stream holds before it
    // beside what it applied there (here the same message: the new one was published on another `prev`).
    expect(said.find((l) => l.includes(`stream message ${last + 1} (epoch 999, id foreign.1) follows another-history`))).to.not.equal(
      undefined,
    )
    const compared = () => said.find((l) => l.startsWith(`kvlog: the stream answers message ${last} with `))
    await waitFor('the stream and the copy compared', () => compared() !== undefined, 40_000)
    const [, stored, applied, storedNext, delivered] =
      /^kvlog: the stream answers message \d+ with (\S+) .* applied here as (\S+) .* message \d+ with (\S+) .* as (\S+) /.exec(compared()!)!
    expect(stored).to.equal(applied)
    expect(storedNext).to.equal(delivered)
  })
})
