/**
 * Property-based bad input (fast-check) on the native front door, beyond the hand-written cases of
 * test/apiserver/http/bad-input.test.ts and ws-bad-input.test.ts: random JSON (deeply nested, with
 * prototype-poisoning keys, near-valid request shapes with wrong types), random bytes and invalid UTF-8
 * as bodies, random query strings, random WebSocket messages and binary frames. Properties: the server
 * answers every request with a status below 500 and, for errors, a registered error code; a WebSocket
 * stays open and usable (except for non-UTF-8 text, which RFC 6455 closes with 1007); the process never
 * dies; the bystanders (a control writer and a control watch) are not affected; memory stays bounded.
 * Replay with KVLOG_TEST_SEED.
 */
import { expect } from 'chai'
import fc from 'fast-check'
import { ALL_ERROR_CODES } from '../../../log/errors.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { sleep, WatchConnection } from '../../support/watch-client.js'
import { Bystanders } from './bystanders.js'

const SEED = Number(process.env.KVLOG_TEST_SEED ?? 424242)
const CODES = new Set<string>(ALL_ERROR_CODES)
const FIELDS = [
  'key',
  'keyBase64',
  'value',
  'valueBase64',
  'rangeEnd',
  'prefix',
  'fromKey',
  'prevKv',
  'lease',
  'ignoreValue',
  'compare',
  'success',
  'failure',
  'type',
  'target',
  'result',
  'revision',
  'limit',
  '__proto__',
  'constructor',
  'prototype',
]

/** Values of every JSON type, strings that are nearly keys, huge and odd numbers. */
const scalar = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 2 ** 53, -(2 ** 63), 1e308, '', '/fuzz/k', 'AA==', '!!notbase64', '\u0000', '\ud800'),
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double(),
)

/** Near-valid request shapes: objects of the API's field names (and poisonous ones) with any values. */
const shaped: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('object'), tie('array')),
  object: fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 8 })), tie('value'), { maxKeys: 6 }),
  array: fc.array(tie('value'), { maxLength: 5 }),
})).value

/** Text that poisons prototypes when parsed naively: __proto__ / constructor.prototype at any depth. */
const poisoned = fc
  .tuple(
    fc.nat(6),
    fc.constantFrom('{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"polluted":1}}}'),
    fc.constantFrom('key', 'value', 'success'),
  )
  .map(([depth, poison, field]) => `${'{"x":'.repeat(depth)}{"${field}":"a","y":${poison}}${'}'.repeat(depth)}`)

const deep = fc
  .tuple(fc.integer({ min: 1000, max: 200_000 }), fc.constantFrom('[', '{"a":'))
  .map(([n, open]) => open.repeat(n) + (open === '[' ? ']'.repeat(n) : '1' + '}'.repeat(n)))

const bytes = fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b))
const invalidUtf8 = fc
  .tuple(fc.string({ maxLength: 20 }), fc.constantFrom([0xc3, 0x28], [0xff], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]))
  .map(([s, bad]) => Buffer.concat([Buffer.from(`{"key":"${s.replace(/["\\]/g, '')}`), Buffer.from(bad), Buffer.from('","value":"v"}')]))

const body = fc.oneof(
  shaped.map((v) => JSON.stringify(v) ?? 'null'),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  poisoned,
  deep,
  bytes,
  invalidUtf8,
)

const target = fc.constantFrom(
  ['PUT', '/v1/kv'],
  ['POST', '/v1/txn'],
  ['POST', '/v1/compact'],
  ['PUT', '/v1/cursors/fuzz'],
  ['DELETE', '/v1/alarms/NOSPACE'],
)

const QUERY_NAMES = [
  'key',
  'keyBase64',
  'prefix',
  'fromKey',
  'rangeEnd',
  'rangeEndBase64',
  'revision',
  'limit',
  'continue',
  'from',
  'to',
  'fromTime',
  'toTime',
  'prevKv',
  'sortOrder',
  'sortTarget',
  'countOnly',
  'keysOnly',
  'startRevision',
  'cursor',
  '__proto__',
]
/** Percent-encodes every UTF-8 byte (lone surrogates become U+FFFD), or passes broken escapes through. */
const encoded = (arb: fc.Arbitrary<string>) =>
  fc.oneof(
    arb.map((s) => [...Buffer.from(s)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')),
    fc.constantFrom('%', '%zz', '%ff%fe', '%00', '%c3%28', '&&', '=='),
  )
const query = fc
  .array(
    fc.tuple(
      encoded(fc.oneof(fc.constantFrom(...QUERY_NAMES), fc.string({ maxLength: 6 }))),
      encoded(fc.oneof(fc.string({ maxLength: 30 }), scalar.map(String))),
    ),
    { maxLength: 6 },
  )
  .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'))

/** A compaction with a valid revision would hide the history the bystanders are checked against. */
function harmless(method: string, path: string, text: string | Buffer): boolean {
  if (path !== '/v1/compact' || typeof text !== 'string') return true
  try {
    const v = JSON.parse(text) as { revision?: unknown }
    return typeof v !== 'object' || v === null || typeof v.revision !== 'number'
  } catch {
    return method !== ''
  }
}

async function expectAnswered(res: Response, what: string): Promise<void> {
  const text = await res.text()
  expect(res.status, `${what}: ${text.slice(0, 300)}`).to.be.below(500)
  if (res.status >= 400) {
    const code = (JSON.parse(text) as { error?: { code?: string } }).error?.code
    expect(CODES.has(code ?? ''), `${what}: error code ${code}`).to.equal(true)
  }
}

describe('reliability: fuzzed bad input on the native door (fast-check)', function () {
  this.timeout(120_000)
  let server: ServerProcess
  let bystanders: Bystanders

  before(async () => {
    server = await startServerProcess(['--ws-max-payload', '64KiB', '--watch-progress-interval', '300ms'])
    bystanders = await Bystanders.start(server)
  })

  after(async () => {
    await server?.stop('SIGTERM').catch(() => undefined)
    await server?.cleanup()
  })

  it('answers random and hostile request bodies with a status below 500 and a registered code', async () => {
    await fc.assert(
      fc.asyncProperty(target, body, async ([method, path], text) => {
        fc.pre(harmless(method, path, text))
        const res = await fetch(`${server.http}${path}`, { method, headers: { 'content-type': 'application/json' }, body: text })
        await expectAnswered(res, `${method} ${path} ${String(text).slice(0, 80)}`)
      }),
      { seed: SEED, numRuns: 300 },
    )
    expect(({} as Record<string, unknown>).polluted, 'prototype pollution in the test process').to.equal(undefined)
  })

  it('answers random query strings on every read route with a status below 500 and a registered code', async () => {
    const route = fc.constantFrom('GET /v1/kv', 'GET /v1/history', 'GET /v1/status', 'GET /v1/cursors', 'GET /v1/alarms')
    await fc.assert(
      fc.asyncProperty(route, query, async (r, qs) => {
        const [method, path] = r.split(' ')
        const res = await fetch(`${server.http}${path}?${qs}`, { method })
        await expectAnswered(res, `${r}?${qs}`)
      }),
      { seed: SEED, numRuns: 300 },
    )
  })

  it('keeps a WebSocket open and usable through random messages and binary frames; answers each bad one', async () => {
    const conn = await WatchConnection.connect(server.http, 'fuzz')
    const message = fc.oneof(
      shaped.map((v) => JSON.stringify(v) ?? 'null'),
      fc
        .record(
          {
            op: fc.constantFrom('create', 'cancel', 'progress', 'nope'),
            id: fc.oneof(fc.integer(), scalar),
            key: scalar,
            startRevision: scalar,
            prefix: scalar,
            extra: scalar,
          },
          { requiredKeys: ['op'] },
        )
        .map((v) => JSON.stringify(v)),
      fc.string({ maxLength: 200 }),
      bytes,
    )
    let sent = 0
    await fc.assert(
      fc.asyncProperty(message, async (m) => {
        conn.sendRaw(m)
        sent++
      }),
      { seed: SEED, numRuns: 300 },
    )
    // Everything is answered in order: a final create with a fresh id comes back created, on the same connection.
    const id = await conn.createAndWait({ id: 999_999, key: '/fuzz/final' })
    expect(conn.isOpen, `open after ${sent} random messages (close ${JSON.stringify(conn.closeInfo)})`).to.equal(true)
    expect(id).to.equal(999_999)
    expect(conn.messages.length, 'the server answered the random messages').to.be.greaterThan(sent / 2)
    for (const rec of conn.messages) {
      if (rec.msg.type === 'error') expect(CODES.has(String(rec.msg.code)), JSON.stringify(rec.msg)).to.equal(true)
    }
    conn.terminate()
  })

  it('closes a WebSocket that sends text that is not UTF-8 (1007), every time, without hurting anyone else', async () => {
    await fc.assert(
      fc.asyncProperty(invalidUtf8, async (b) => {
        const conn = await WatchConnection.connect(server.http, 'utf8')
        conn.sendRaw(b, false)
        const info = await Promise.race([conn.closed, sleep(5000).then(() => undefined)])
        expect(info?.code).to.equal(1007)
      }),
      { seed: SEED, numRuns: 20 },
    )
  })

  it('is alive and the bystanders were not hurt (control writes, control watch exact, memory bounded)', async () => {
    expect(server.child.exitCode, server.stderr()).to.equal(null)
    await bystanders.finish()
  })
})
