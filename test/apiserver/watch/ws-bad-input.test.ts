/**
 * Bad input on a WebSocket watch connection (docs/api.md, "Watch"): every bad request gets an `error`
 * message with its stable code, and the connection and its live watch carry on. A frame above
 * wsMaxPayload closes that connection (1009) and only that one.
 */
import { expect } from 'chai'
import { useServer } from '../http/helpers.js'
import { WatchConnection, type Received, type WatchMessage } from '../../support/watch-client.js'
import { checkWatches, Oracle } from './checker.js'

const MAX_WATCHERS = 3
const MAX_PAYLOAD = 16 * 1024

describe('WebSocket watch: bad input', function () {
  this.timeout(30_000)
  const server = useServer(['--max-watchers-per-connection', String(MAX_WATCHERS), '--ws-max-payload', '16KiB'])
  let conn: WatchConnection
  let live: number
  let liveStart: number
  let writes = 0
  const others: WatchConnection[] = []

  before(async () => {
    const { api, process } = server()
    liveStart = (await api.revision()) + 1
    conn = await WatchConnection.connect(process.http, 'main')
    live = await conn.createAndWait({ id: 1, key: '/live/', prefix: true, prevKv: true, startRevision: liveStart })
  })

  after(async () => {
    for (const c of [conn, ...others]) c?.terminate()
  })

  /** Writes to the live watch's prefix and waits for the event on it: the connection still works. */
  async function liveStillWorks(): Promise<void> {
    const { api } = server()
    const revision = (await api.mustPut(`/live/k${writes++ % 3}`, `v${writes}`)).header.revision
    const list = conn.messagesFor(live)
    await conn.waitFor(
      () => list.some((r) => r.msg.type === 'events' && r.msg.revision! >= revision),
      5000,
      `the live watch's event at ${revision}`,
    )
    expect(conn.isOpen, 'the connection is open').to.equal(true)
  }

  /** Sends one bad request; expects exactly one `error` message in answer, with `code` (and `id` when given). */
  async function expectErrorFor(send: () => void, code: string, id?: number): Promise<WatchMessage> {
    const from = conn.messages.length
    send()
    const got = await conn
      .waitForMessage((m) => m.type === 'error' || (id !== undefined && m.id === id && m.type !== 'events'), 3000, from)
      .catch(() => {
        const seen = conn.messages
          .slice(from)
          .map((r) => r.msg)
          .filter((m) => m.type !== 'events')
        throw new Error(`no error ${code} in answer; got instead: ${JSON.stringify(seen)}`)
      })
    const m = got.msg
    expect(m, JSON.stringify(m)).to.include({ type: 'error', code })
    expect(m.message, 'message').to.be.a('string')
    if (id !== undefined) expect(m.id, 'id').to.equal(id)
    // Nothing else answered it: no second error, no created.
    await liveStillWorks()
    const extra = conn.messages.slice(from).filter((r: Received) => r !== got && r.msg.type !== 'events')
    expect(
      extra.map((r) => r.msg),
      'other answers',
    ).to.deep.equal([])
    return m
  }

  it('answers malformed JSON, binary frames and non-object messages with INVALID_ARGUMENT', async () => {
    await expectErrorFor(() => conn.sendRaw('{"op": "create", "key": '), 'INVALID_ARGUMENT')
    await expectErrorFor(() => conn.sendRaw('not json at all'), 'INVALID_ARGUMENT')
    await expectErrorFor(() => conn.sendRaw(Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x00, 0xff])), 'INVALID_ARGUMENT')
    // A binary frame holding valid JSON is still a binary frame.
    await expectErrorFor(() => conn.sendRaw(Buffer.from(JSON.stringify({ op: 'create', id: 9, key: '/x' }))), 'INVALID_ARGUMENT')
    for (const text of ['[1,2]', 'null', '"create"', '42', '{}']) {
      await expectErrorFor(() => conn.sendRaw(text), 'INVALID_ARGUMENT')
    }
    expect(conn.messagesFor(9), 'the binary create made no watch').to.deep.equal([])
  })

  it('answers an unknown op with INVALID_ARGUMENT', async () => {
    await expectErrorFor(() => conn.send({ op: 'frobnicate' }), 'INVALID_ARGUMENT')
    await expectErrorFor(() => conn.send({ op: 'CREATE', key: '/x' }), 'INVALID_ARGUMENT')
  })

  it('answers unknown fields in create with INVALID_ARGUMENT naming the field, and creates nothing', async () => {
    const e = await expectErrorFor(() => conn.send({ op: 'create', id: 7, key: '/x', bogus: true }), 'INVALID_ARGUMENT', 7)
    expect(e.details).to.deep.equal({ field: 'bogus' })
    await expectErrorFor(() => conn.send({ op: 'create', id: 7, key: '/x', filters: ['NOPUT'] }), 'INVALID_ARGUMENT', 7)
    await expectErrorFor(() => conn.cancel(7), 'UNKNOWN_WATCH', 7)
  })

  it('answers unknown fields in cancel with INVALID_ARGUMENT (and does not cancel)', async () => {
    const victim = await conn.createAndWait({ id: 2, key: '/victim' })
    try {
      await expectErrorFor(() => conn.send({ op: 'cancel', id: victim, bogus: 1 }), 'INVALID_ARGUMENT', victim)
      expect(
        conn.messagesFor(victim).map((r) => r.msg.type),
        'the watch was not canceled',
      ).to.deep.equal(['created', 'error'])
    } finally {
      conn.cancel(victim)
      await conn.waitFor(
        () => conn.messagesFor(victim).some((r) => r.msg.type === 'canceled' || r.msg.code === 'UNKNOWN_WATCH'),
        5000,
        'the cancel',
      )
    }
  })

  it('answers unknown fields in progress with INVALID_ARGUMENT (and sends no progress)', async () => {
    await expectErrorFor(() => conn.send({ op: 'progress', bogus: 1 }), 'INVALID_ARGUMENT')
  })

  for (const [what, request, id] of [
    ['a number key', { op: 'create', id: 11, key: 5 }, 11],
    ['a string startRevision', { op: 'create', id: 11, key: '/x', startRevision: '5' }, 11],
    ['a negative startRevision', { op: 'create', id: 11, key: '/x', startRevision: -1 }, 11],
    ['a fractional startRevision', { op: 'create', id: 11, key: '/x', startRevision: 1.5 }, 11],
    ['a string prevKv', { op: 'create', id: 11, key: '/x', prevKv: 'yes' }, 11],
    ['a number prefix', { op: 'create', id: 11, key: '/x', prefix: 1 }, 11],
    ['a null noPut', { op: 'create', id: 11, key: '/x', noPut: null }, 11],
    ['bad base64', { op: 'create', id: 11, keyBase64: '!!' }, 11],
    ['key and keyBase64', { op: 'create', id: 11, key: '/x', keyBase64: 'L3g=' }, 11],
    ['prefix and fromKey', { op: 'create', id: 11, key: '/x', prefix: true, fromKey: true }, 11],
    ['no key', { op: 'create', id: 11, prefix: true }, 11],
    ['a negative id', { op: 'create', id: -1, key: '/x' }, -1],
    ['an id above 2^31-1', { op: 'create', id: 2 ** 31, key: '/x' }, 2 ** 31],
    ['a string id', { op: 'create', id: '3', key: '/x' }, undefined],
    ['a cancel without id', { op: 'cancel' }, undefined],
    ['a cancel with a string id', { op: 'cancel', id: '1' }, undefined],
  ] as const) {
    it(`answers ${what} with INVALID_ARGUMENT`, async () => {
      await expectErrorFor(() => conn.send(request), 'INVALID_ARGUMENT', id)
    })
  }

  it('answers an empty key with EMPTY_KEY', async () => {
    await expectErrorFor(() => conn.send({ op: 'create', id: 12, key: '' }), 'EMPTY_KEY', 12)
  })

  it('answers a cancel of an unknown id with UNKNOWN_WATCH', async () => {
    const e = await expectErrorFor(() => conn.cancel(999), 'UNKNOWN_WATCH', 999)
    expect(e.details).to.deep.equal({ id: 999 })
  })

  it('answers a duplicate client id with WATCH_ID_EXISTS, and the first watch is untouched', async () => {
    const e = await expectErrorFor(() => conn.send({ op: 'create', id: live, key: '/dup' }), 'WATCH_ID_EXISTS', live)
    expect(e.details).to.deep.equal({ id: live })
    const types = conn.messagesFor(live).map((r) => r.msg.type)
    expect(
      types.filter((t) => t === 'created' || t === 'canceled'),
      'the first watch was neither recreated nor canceled',
    ).to.deep.equal(['created'])
  })

  it(`answers watch number ${MAX_WATCHERS + 1} with TOO_MANY_WATCHERS, and frees a slot on cancel`, async () => {
    const a = await conn.createAndWait({ id: 21, key: '/many/a' })
    const b = await conn.createAndWait({ id: 22, key: '/many/b' })
    const e = await expectErrorFor(() => conn.send({ op: 'create', id: 23, key: '/many/c' }), 'TOO_MANY_WATCHERS', 23)
    expect(e.details).to.deep.equal({ maxWatchersPerConnection: MAX_WATCHERS })
    // Server-chosen ids count too.
    await expectErrorFor(() => conn.send({ op: 'create', key: '/many/c' }), 'TOO_MANY_WATCHERS')
    conn.cancel(b)
    await conn.waitFor(() => conn.messagesFor(b).some((r) => r.msg.type === 'canceled'), 5000, 'the cancel')
    const canceled = conn.messagesFor(b).find((r) => r.msg.type === 'canceled')!.msg
    expect(canceled.code, 'a client cancel has no code').to.equal(undefined)
    const c = await conn.createAndWait({ id: 23, key: '/many/c' })
    for (const id of [a, c]) conn.cancel(id)
    await conn.waitFor(() => [a, c].every((id) => conn.messagesFor(id).some((r) => r.msg.type === 'canceled')), 5000, 'the cancels')
    await liveStillWorks()
  })

  it('closes a connection that sends a frame above wsMaxPayload with 1009; other connections carry on', async () => {
    const { process } = server()
    const big = await WatchConnection.connect(process.http, 'big')
    others.push(big)
    const bigWatch = await big.createAndWait({ id: 1, key: '/big' })
    // Just below the limit is fine (an unknown-field error, the connection stays).
    big.send({ op: 'create', id: 2, key: '/big2', pad: 'x'.repeat(MAX_PAYLOAD - 200) })
    await big.waitForMessage((m) => m.type === 'error', 5000, 0)
    expect(big.isOpen).to.equal(true)
    big.sendRaw(JSON.stringify({ op: 'create', id: 3, key: '/big3', pad: 'x'.repeat(MAX_PAYLOAD + 100) }))
    const closed = await Promise.race([big.closed, new Promise<undefined>((r) => setTimeout(() => r(undefined), 5000))])
    expect(closed, 'closed').to.not.equal(undefined)
    expect(closed!.code).to.equal(1009)
    expect(big.messagesFor(bigWatch).map((r) => r.msg.type)).to.deep.equal(['created'])
    await liveStillWorks()
    const fresh = await WatchConnection.connect(process.http, 'fresh')
    others.push(fresh)
    await fresh.createAndWait({ key: '/fresh' })
  })

  it('closes a connection that sends a text frame that is not UTF-8 with 1007 (RFC 6455); other connections carry on', async () => {
    const { process } = server()
    const bad = await WatchConnection.connect(process.http, 'not-utf8')
    others.push(bad)
    await bad.createAndWait({ key: '/utf8' })
    bad.sendRaw(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), false) // {"\xff\xfe"} as a text frame
    const closed = await Promise.race([bad.closed, new Promise<undefined>((r) => setTimeout(() => r(undefined), 5000))])
    expect(closed?.code, 'close code').to.equal(1007)
    await liveStillWorks()
  })

  it("the live watch's whole stream is exact: every event once, in order, with prevKv", async () => {
    const { api, process } = server()
    await liveStillWorks()
    const last = await api.revision()
    conn.requestProgress()
    const list = conn.messagesFor(live)
    await conn.waitFor(() => list.some((r) => r.msg.type === 'progress' && r.msg.revision! >= last), 5000, 'a progress notice')
    const oracle = new Oracle(liveStart)
    await oracle.fetch(process.http)
    // Errors that carry the live watch's id answer bad requests that reused it (WATCH_ID_EXISTS): not stream content.
    const stream = list.filter((r) => r.msg.type !== 'error')
    const watches = [
      { name: 'live', spec: { key: '/live/', prefix: true, prevKv: true }, segments: [{ startRevision: liveStart, messages: stream }] },
    ]
    expect(checkWatches(oracle, watches, { finalRevision: last })).to.deep.equal([])
    expect(list.filter((r) => r.msg.type === 'events').length, 'events on the live watch').to.be.at.least(writes)
  })
})
