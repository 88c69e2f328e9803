/**
 * Which durable positions count toward a majority (durability.ts), over one real nats-server (core NATS
 * only): a member's announced (seq, hash) counts only when this member's copy has the same hash at that
 * sequence; a position from another history never counts; one ahead of this member counts once this
 * member has applied that far; a member whose applier stopped announces nothing.
 */
import { expect } from 'chai'
import { spawn, type ChildProcess } from 'node:child_process'
import { connect, type NatsConnection } from 'nats'
import { Durability, type DurablePosition } from '../../../log/jetstream/durability.js'
import { decode, encode } from '../../../log/jetstream/messages.js'
import { clusterNames } from '../../../log/jetstream/options.js'
import { freePort } from '../../support/free-port.js'
import { NATS_SERVER_BIN } from '../../support/nats-cluster.js'
import { sleep, waitFor } from '../../support/wait.js'

describe('Durability: positions count with their chain hash', function () {
  this.timeout(30_000)
  const names = clusterNames('positions')
  let server: ChildProcess
  let nc: NatsConnection
  let peer: NatsConnection
  const made: Durability[] = []

  before(async () => {
    const port = await freePort()
    server = spawn(NATS_SERVER_BIN, ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' })
    const deadline = Date.now() + 10_000
    for (;;) {
      try {
        nc = await connect({ servers: `nats://127.0.0.1:${port}`, reconnect: false })
        peer = await connect({ servers: `nats://127.0.0.1:${port}`, reconnect: false })
        break
      } catch (err) {
        if (Date.now() > deadline) throw err
        await sleep(100)
      }
    }
  })
  after(async () => {
    for (const d of made) d.stop()
    await nc?.close()
    await peer?.close()
    server?.kill('SIGKILL')
  })

  /** Member a (roster a, b, c) with its own copy at `own`; `applying` says whether its applier runs. */
  const member = async (own: DurablePosition, state = { applying: true }) => {
    const d = new Durability(nc, names, own.name, {
      learners: () => [],
      roster: () => ['a', 'b', 'c'],
      position: () => own,
      applying: () => state.applying,
      kept: () => Promise.resolve([]),
      observeWait: () => undefined,
    })
    made.push(d)
    d.start()
    // Its subscriptions are in place at the server before anything is announced to it.
    await nc.flush()
    return d
  }
  const announce = async (p: DurablePosition) => {
    peer.publish(names.durable, encode(p))
    await peer.flush()
  }
  const code = (p: Promise<unknown>): Promise<string> =>
    p.then(
      () => 'resolved',
      (err: { code?: string }) => err.code ?? 'none',
    )

  it('counts a peer only at a sequence where this copy has the same hash', async () => {
    const own = { name: 'a', seq: 5, hash: 'h5' }
    const a = await member(own)
    for (let s = 1; s <= 5; s++) a.hashed(s, `h${s}`)
    a.advanced(5)
    // c reports 5 from another history (e.g. messages the stream lost and nobody brought back).
    await announce({ name: 'c', seq: 5, hash: 'other' })
    expect(await code(a.waitQuorum(5, 1000))).to.equal('OUTCOME_UNKNOWN')
    // b, ahead of a: counts once a has applied that far, with the same hash.
    const quorum = a.waitQuorum(5, 20_000)
    await announce({ name: 'b', seq: 7, hash: 'h7' })
    a.hashed(6, 'h6')
    a.hashed(7, 'h7')
    own.seq = 7
    own.hash = 'h7'
    a.advanced(7)
    expect(await code(quorum)).to.equal('resolved')
    // What /metrics shows: c, on another history, is behind by everything.
    expect(a.lags(7)).to.deep.equal([
      { name: 'a', lag: 0 },
      { name: 'b', lag: 0 },
      { name: 'c', lag: 7 },
    ])
    a.stop()
  })

  it('does not announce while its applier is stopped', async () => {
    const heard: string[] = []
    const sub = peer.subscribe(names.durable, { callback: (_err, msg) => heard.push(decode<DurablePosition>(msg.data).name) })
    await peer.flush()
    const count = (name: string) => heard.filter((n) => n === name).length
    const state = { applying: false }
    const x = await member({ name: 'x', seq: 3, hash: 'h3' }, state)
    // y starts with x and announces on the same heartbeat: three of its announcements, x's would be there.
    await member({ name: 'y', seq: 3, hash: 'h3' })
    x.advanced(3)
    await waitFor('three announcements from y', () => count('y') >= 3, 20_000)
    expect(count('x')).to.equal(0)
    state.applying = true
    x.advanced(3)
    await waitFor('x to announce', () => count('x') > 0, 20_000)
    sub.unsubscribe()
  })
})
