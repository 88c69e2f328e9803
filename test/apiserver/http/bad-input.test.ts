/**
 * Bad input on every endpoint of the native HTTP API against one real `kvlog serve` process: malformed and
 * non-object JSON, wrong types, unknown fields and query parameters, prototype-poisoning keys, huge
 * payloads, bad revisions, empty keys, bad base64, unknown routes. Each answer must carry the documented
 * status and stable error code (docs/errors.md), write nothing, and leave the server serving.
 */
import { expect } from 'chai'
import { expectError, ok, type Api, type Query, type Reply, useServer } from './helpers.js'

const MAX_REQUEST_BYTES = 1.5 * 1024 * 1024 // the default

describe('native HTTP API: bad input (real process)', function () {
  this.timeout(30_000)
  const server = useServer()
  const api = (): Api => server().api
  let sentinel = { revision: 0 }

  before(async () => {
    sentinel = (await api().mustPut('sentinel', 'untouched')).header
    await api().mustPut('k', 'v')
  })

  /** Asserts the request neither wrote nor compacted anything, and returns its answer. */
  async function noEffect<T>(request: () => Promise<Reply<T>>): Promise<Reply<T>> {
    const before = ok(await api().status())
    const reply = await request()
    const after = ok(await api().status())
    expect(after.revision, `a rejected request wrote: ${JSON.stringify(reply.body)}`).to.equal(before.revision)
    expect(after.compactRevision, 'a rejected request compacted').to.equal(before.compactRevision)
    return reply
  }

  async function expectRejected(request: () => Promise<Reply<unknown>>, status: number, code: string, what: string) {
    const reply = await noEffect(request)
    try {
      return expectError(reply, status, code)
    } catch (err) {
      throw new Error(`${what}: ${(err as Error).message}`, { cause: err })
    }
  }

  const BODY_ROUTES: Array<{ method: string; path: string; valid: unknown }> = [
    { method: 'PUT', path: '/v1/kv', valid: { key: 'body/ok', value: 'x' } },
    { method: 'POST', path: '/v1/txn', valid: { success: [{ type: 'put', key: 'body/ok', value: 'x' }] } },
    { method: 'POST', path: '/v1/compact', valid: { revision: 2 } },
  ]
  const QUERY_ROUTES: Array<{ method: string; path: string }> = [
    { method: 'GET', path: '/v1/kv' },
    { method: 'DELETE', path: '/v1/kv' },
    { method: 'GET', path: '/v1/history' },
  ]
  const raw = (method: string, path: string, body: string | Buffer, contentType: string | null = 'application/json') =>
    api().request(method, path, { raw: body, contentType })

  describe('JSON bodies (PUT /v1/kv, POST /v1/txn, POST /v1/compact)', () => {
    it('answers malformed JSON with 400 INVALID_ARGUMENT', async () => {
      const malformed = ['{bad', '{"key":', '{"key":"a",}', "{'key':'a'}", '{"key":"a"} x', '\u0000', '{"key":"a"', '']
      for (const { method, path } of BODY_ROUTES) {
        for (const body of malformed)
          await expectRejected(() => raw(method, path, body), 400, 'INVALID_ARGUMENT', `${method} ${path} ${JSON.stringify(body)}`)
      }
    })

    it('answers JSON that is not an object with 400 INVALID_ARGUMENT', async () => {
      for (const { method, path } of BODY_ROUTES) {
        for (const body of ['[]', '[{"key":"a"}]', '"x"', '42', 'null', 'true', '[1,2]']) {
          await expectRejected(() => raw(method, path, body), 400, 'INVALID_ARGUMENT', `${method} ${path} ${body}`)
        }
      }
    })

    it('answers missing bodies with 400 INVALID_ARGUMENT, and the body types a page may send cross-origin with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
      for (const { method, path, valid } of BODY_ROUTES) {
        await expectRejected(() => api().request(method, path), 400, 'INVALID_ARGUMENT', `${method} ${path} no body`)
        await expectRejected(
          () => raw(method, path, JSON.stringify(valid), 'text/plain'),
          415,
          'UNSUPPORTED_MEDIA_TYPE',
          `${method} ${path} text/plain`,
        )
        await expectRejected(
          () => raw(method, path, 'revision=2&key=a', 'application/x-www-form-urlencoded'),
          415,
          'UNSUPPORTED_MEDIA_TYPE',
          `${method} ${path} form`,
        )
        await expectRejected(
          () => raw(method, path, JSON.stringify(valid), 'multipart/form-data; boundary=x'),
          415,
          'UNSUPPORTED_MEDIA_TYPE',
          `${method} ${path} multipart`,
        )
      }
    })

    it('rejects __proto__ and constructor.prototype keys anywhere in the body with 400 INVALID_ARGUMENT', async () => {
      const poisoned = [
        '{"__proto__":{"polluted":true},"key":"p","value":"x"}',
        '{"key":"p","value":"x","constructor":{"prototype":{"polluted":true}}}',
        '{"success":[{"type":"put","key":"p","__proto__":{"polluted":true}}]}',
        '{"success":[{"type":"txn","success":[{"type":"put","key":"p","constructor":{"prototype":{"x":1}}}]}]}',
        '{"compare":[{"key":"p","target":"VERSION","result":"EQUAL","value":0,"__proto__":{"target":"MOD"}}]}',
        '{"revision":2,"__proto__":{"revision":3}}',
      ]
      for (const { method, path } of BODY_ROUTES) {
        for (const body of poisoned)
          await expectRejected(() => raw(method, path, body), 400, 'INVALID_ARGUMENT', `${method} ${path} ${body}`)
      }
      // Plain "constructor" or "prototype" fields are just unknown fields.
      const e = await expectRejected(() => api().put({ key: 'p', constructor: 1 }), 400, 'INVALID_ARGUMENT', 'constructor field')
      expect(e.details?.field).to.equal('constructor')
      expect(({} as Record<string, unknown>).polluted).to.equal(undefined)
    })

    it('rejects unknown fields with 400 INVALID_ARGUMENT naming the field', async () => {
      const cases: Array<[string, string, unknown, string]> = [
        ['PUT', '/v1/kv', { key: 'a', value: 'x', vlaue: 'typo' }, 'vlaue'],
        ['PUT', '/v1/kv', { key: 'a', ttl: 5 }, 'ttl'],
        ['POST', '/v1/txn', { success: [], else: [] }, 'txn.else'],
        ['POST', '/v1/txn', { success: [{ type: 'put', key: 'a', prevkv: true }] }, 'txn.success[0].prevkv'],
        ['POST', '/v1/txn', { compare: [{ key: 'a', target: 'MOD', result: 'EQUAL', value: 0, op: 'x' }] }, 'txn.compare[0].op'],
        ['POST', '/v1/txn', { failure: [{ type: 'range', key: 'a', sort: 'x' }] }, 'txn.failure[0].sort'],
        ['POST', '/v1/txn', { success: [{ type: 'delete', key: 'a', value: 'x' }] }, 'txn.success[0].value'],
        ['POST', '/v1/txn', { success: [{ type: 'txn', then: [] }] }, 'txn.success[0].then'],
        ['POST', '/v1/compact', { revision: 2, physical: true }, 'physical'],
      ]
      for (const [method, path, body, field] of cases) {
        const e = await expectRejected(
          () => api().request(method, path, { json: body }),
          400,
          'INVALID_ARGUMENT',
          `${method} ${path} ${field}`,
        )
        expect(e.details?.field, `${method} ${path}`).to.equal(field)
      }
    })

    it('rejects wrong field types with 400 INVALID_ARGUMENT', async () => {
      const put: unknown[] = [
        { key: 1 },
        { key: ['a'] },
        { key: { a: 1 } },
        { key: true },
        { key: null },
        { key: 'a', value: 1 },
        { key: 'a', value: null },
        { key: 'a', value: ['x'] },
        { key: 'a', prevKv: 'true' },
        { key: 'a', prevKv: 1 },
        { key: 'a', ignoreValue: 'yes' },
        { key: 'a', ignoreLease: 0 },
        { key: 'a', lease: -1 },
        { key: 'a', lease: 1.5 },
        { key: 'a', lease: 'abc' },
        { key: 'a', lease: '-1' },
        { key: 'a', lease: '18446744073709551616' },
        { key: 'a', lease: '0x10' },
        { key: 'a', lease: {} },
        { key: 'a', lease: true },
        { keyBase64: 5 },
        { key: 'a', valueBase64: false },
      ]
      for (const body of put) await expectRejected(() => api().put(body), 400, 'INVALID_ARGUMENT', `PUT ${JSON.stringify(body)}`)

      const txn: unknown[] = [
        { compare: {} },
        { compare: 'x' },
        { success: 'put' },
        { failure: {} },
        { compare: [1] },
        { compare: [null] },
        { success: [[]] },
        { compare: [{ key: 'a', target: 'mod', result: 'EQUAL', value: 0 }] },
        { compare: [{ key: 'a', target: 'MOD', result: '==', value: 0 }] },
        { compare: [{ key: 'a', result: 'EQUAL', value: 0 }] },
        { compare: [{ key: 'a', target: 'MOD', value: 0 }] },
        { compare: [{ key: 'a', target: 'MOD', result: 'EQUAL', value: '7' }] },
        { compare: [{ key: 'a', target: 'MOD', result: 'EQUAL', value: -1 }] },
        { compare: [{ key: 'a', target: 'VERSION', result: 'EQUAL', value: 1.5 }] },
        { compare: [{ key: 'a', target: 'VALUE', result: 'EQUAL', value: 7 }] },
        { compare: [{ key: 'a', target: 'LEASE', result: 'EQUAL', value: 'x' }] },
        { compare: [{ key: 'a', target: 'MOD', result: 'EQUAL', value: 0, prefix: 'yes' }] },
        { success: [{ key: 'a' }] },
        { success: [{ type: 'PUT', key: 'a' }] },
        { success: [{ type: 'get', key: 'a' }] },
        { success: [{ type: 'put' }] },
        { success: [{ type: 'delete' }] },
        { success: [{ type: 'range' }] },
        { success: [{ type: 'range', key: 'a', revision: '2' }] },
        { success: [{ type: 'range', key: 'a', revision: -1 }] },
        { success: [{ type: 'range', key: 'a', limit: 1.5 }] },
        { success: [{ type: 'range', key: 'a', sortOrder: 'up' }] },
        { success: [{ type: 'range', key: 'a', sortTarget: 'NAME' }] },
        { success: [{ type: 'range', key: 'a', keysOnly: 'true' }] },
        { success: [{ type: 'range', key: 'a', prefix: true, rangeEnd: 'b' }] },
        { success: [{ type: 'delete', key: 'a', fromKey: true, prefix: true }] },
        { success: [{ type: 'txn', success: {} }] },
        { success: [{ type: 'txn', compare: [{ key: 'a' }] }] },
      ]
      for (const body of txn) await expectRejected(() => api().txn(body), 400, 'INVALID_ARGUMENT', `txn ${JSON.stringify(body)}`)

      for (const revision of ['2', '', null, true, 1.5, -1, [2], { r: 2 }, 2 ** 53, Number.MAX_VALUE]) {
        await expectRejected(() => api().compact(revision), 400, 'INVALID_ARGUMENT', `compact ${JSON.stringify(revision)}`)
      }
      await expectRejected(() => raw('POST', '/v1/compact', '{}'), 400, 'INVALID_ARGUMENT', 'compact without revision')
    })

    it('answers bodies over maxRequestBytes with 413 REQUEST_TOO_LARGE', async () => {
      const huge = 'h'.repeat(MAX_REQUEST_BYTES + 1024)
      await expectRejected(() => api().put({ key: 'huge', value: huge }), 413, 'REQUEST_TOO_LARGE', 'PUT')
      await expectRejected(() => api().txn({ success: [{ type: 'put', key: 'huge', value: huge }] }), 413, 'REQUEST_TOO_LARGE', 'txn')
      await expectRejected(() => raw('POST', '/v1/compact', `{"revision":2,"pad":"${huge}"}`), 413, 'REQUEST_TOO_LARGE', 'compact')
      // Over the limit but not valid JSON either: the size is what counts.
      await expectRejected(() => raw('PUT', '/v1/kv', `{${huge}`), 413, 'REQUEST_TOO_LARGE', 'PUT malformed')
      // Just under the limit is accepted (value plus JSON framing < maxRequestBytes).
      const fits = 'f'.repeat(MAX_REQUEST_BYTES - 200)
      expect(ok(await api().put({ key: 'huge/fits', value: fits })).header.revision).to.be.a('number')
      ok(await api().delete({ key: 'huge/fits' }))
    })

    it('answers a deeply nested transaction with a 4xx error code, never 500, and writes nothing', async () => {
      for (const depth of [1600, 3000]) {
        let op = `{"type":"put","key":"deep/${depth}"}`
        for (let i = 0; i < depth; i++) op = `{"type":"txn","success":[${op}]}`
        const body = `{"success":[${op}]}`
        expect(body.length).to.be.below(MAX_REQUEST_BYTES)
        const reply = await noEffect(() => raw('POST', '/v1/txn', body))
        const what = `depth ${depth}: ${JSON.stringify(reply.body)}`
        expect(reply.status, what).to.be.oneOf([400, 413])
        expect((reply.body as { error: { code: string } }).error.code, what).to.be.oneOf([
          'INVALID_ARGUMENT',
          'TOO_MANY_OPS',
          'REQUEST_TOO_LARGE',
          'JSON_TOO_DEEP',
        ])
      }
      expect(ok(await api().range({ key: 'deep/', prefix: true })).count).to.equal(0)
    })
  })

  describe('query parameters (GET/DELETE /v1/kv, GET /v1/history)', () => {
    const each = async (query: Query, status: number, code: string) => {
      const errors = []
      for (const { method, path } of QUERY_ROUTES) {
        errors.push(
          await expectRejected(() => api().request(method, path, { query }), status, code, `${method} ${path}?${JSON.stringify(query)}`),
        )
      }
      return errors
    }

    it('rejects unknown query parameters with 400 INVALID_ARGUMENT naming them', async () => {
      for (const name of ['foo', 'Key', 'pefix', 'rev', '__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString']) {
        for (const e of await each({ key: 'k', [name]: 'x' }, 400, 'INVALID_ARGUMENT')) expect(e.details?.field).to.equal(name)
      }
      await each('key=k&constructor[prototype][polluted]=1', 400, 'INVALID_ARGUMENT')
      await each('key=k&__proto__[polluted]=1', 400, 'INVALID_ARGUMENT')
      expect(({} as Record<string, unknown>).polluted).to.equal(undefined)
    })

    it('rejects unknown query parameters on the body and status endpoints too, doing nothing', async () => {
      for (const { method, path, valid } of BODY_ROUTES) {
        for (const query of [{ foo: '1' }, { dryRun: 'true' }, { prevKv: 'true' }]) {
          const reply = await noEffect(() => api().request(method, path, { query, json: valid }))
          try {
            expectError(reply, 400, 'INVALID_ARGUMENT')
          } catch (err) {
            throw new Error(`${method} ${path}?${JSON.stringify(query)}: ${(err as Error).message}`, { cause: err })
          }
        }
      }
      expectError(await api().get('/v1/status', { foo: '1' }), 400, 'INVALID_ARGUMENT')
    })

    it('rejects a missing, empty or doubled key', async () => {
      await each({}, 400, 'INVALID_ARGUMENT')
      await each({ prefix: true }, 400, 'INVALID_ARGUMENT')
      await each({ key: '' }, 400, 'EMPTY_KEY')
      await each({ keyBase64: '' }, 400, 'EMPTY_KEY')
      await each({ key: '', prefix: true }, 400, 'EMPTY_KEY')
      await each('key=a&key=b', 400, 'INVALID_ARGUMENT')
      await each({ key: 'k', keyBase64: 'aw==' }, 400, 'INVALID_ARGUMENT')
      await each({ key: 'k', rangeEnd: 'z', rangeEndBase64: 'eg==' }, 400, 'INVALID_ARGUMENT')
    })

    it('rejects empty keys in bodies with 400 EMPTY_KEY', async () => {
      await expectRejected(() => api().put({ key: '', value: 'x' }), 400, 'EMPTY_KEY', 'PUT key ""')
      await expectRejected(() => api().put({ keyBase64: '', value: 'x' }), 400, 'EMPTY_KEY', 'PUT keyBase64 ""')
      for (const body of [
        { success: [{ type: 'put', key: '' }] },
        { success: [{ type: 'delete', key: '' }] },
        { failure: [{ type: 'range', key: '' }] },
        { compare: [{ key: '', target: 'VERSION', result: 'EQUAL', value: 0 }] },
        { success: [{ type: 'txn', success: [{ type: 'put', keyBase64: '' }] }] },
      ]) {
        await expectRejected(() => api().txn(body), 400, 'EMPTY_KEY', JSON.stringify(body))
      }
    })

    it('rejects both key and keyBase64 (and value and valueBase64) in bodies', async () => {
      await expectRejected(() => api().put({ key: 'a', keyBase64: 'YQ==' }), 400, 'INVALID_ARGUMENT', 'PUT key+keyBase64')
      await expectRejected(() => api().put({ key: 'a', value: 'x', valueBase64: 'eA==' }), 400, 'INVALID_ARGUMENT', 'PUT value+valueBase64')
      await expectRejected(() => api().txn({ success: [{ type: 'put', key: 'a', keyBase64: 'YQ==' }] }), 400, 'INVALID_ARGUMENT', 'txn put')
      await expectRejected(
        () => api().txn({ compare: [{ key: 'a', target: 'VALUE', result: 'EQUAL', value: 'x', valueBase64: 'eA==' }] }),
        400,
        'INVALID_ARGUMENT',
        'txn compare',
      )
      await expectRejected(
        () => api().txn({ success: [{ type: 'delete', key: 'a', rangeEnd: 'b', rangeEndBase64: 'Yg==' }] }),
        400,
        'INVALID_ARGUMENT',
        'txn delete',
      )
    })

    it('rejects invalid base64 with 400 INVALID_ARGUMENT', async () => {
      const invalid = ['!!!!', 'YQ=', 'Y', 'YQ==YQ==', 'Y===', '====', 'YW J', 'YW-_', 'é', 'YQ==\n']
      for (const value of invalid) {
        await each({ keyBase64: value }, 400, 'INVALID_ARGUMENT')
        await each({ key: 'a', rangeEndBase64: value }, 400, 'INVALID_ARGUMENT')
        await expectRejected(() => api().put({ keyBase64: value }), 400, 'INVALID_ARGUMENT', `PUT keyBase64 ${value}`)
        await expectRejected(() => api().put({ key: 'a', valueBase64: value }), 400, 'INVALID_ARGUMENT', `PUT valueBase64 ${value}`)
        await expectRejected(
          () => api().txn({ success: [{ type: 'put', keyBase64: value }] }),
          400,
          'INVALID_ARGUMENT',
          `txn keyBase64 ${value}`,
        )
        await expectRejected(
          () => api().txn({ compare: [{ key: 'a', target: 'VALUE', result: 'EQUAL', valueBase64: value }] }),
          400,
          'INVALID_ARGUMENT',
          `compare ${value}`,
        )
      }
      // The unencoded '+' of a query string is a space, which is not base64.
      await each('keyBase64=a+b=', 400, 'INVALID_ARGUMENT')
    })

    it('rejects malformed booleans, enums, limits and conflicting key selections', async () => {
      for (const prefix of ['1', 'yes', 'TRUE', 'on']) await each({ key: 'k', prefix }, 400, 'INVALID_ARGUMENT')
      await each({ key: 'k', prefix: true, fromKey: true }, 400, 'INVALID_ARGUMENT')
      await each({ key: 'k', prefix: true, rangeEnd: 'z' }, 400, 'INVALID_ARGUMENT')
      await each('key=k&prefix=true&prefix=true', 400, 'INVALID_ARGUMENT')
      for (const q of [
        { sortOrder: 'up' },
        { sortTarget: 'key' },
        { limit: '-1' },
        { limit: '1.5' },
        { limit: 'ten' },
        { keysOnly: 'no' },
        { countOnly: '2' },
      ]) {
        await expectRejected(() => api().range({ key: 'k', ...q }), 400, 'INVALID_ARGUMENT', JSON.stringify(q))
      }
      for (const q of [{ limit: '-1' }, { limit: 'x' }, { prevKv: 'maybe' }]) {
        await expectRejected(() => api().history({ key: 'k', ...q }), 400, 'INVALID_ARGUMENT', JSON.stringify(q))
      }
      await expectRejected(() => api().delete({ key: 'k', prevKv: '1' }), 400, 'INVALID_ARGUMENT', 'delete prevKv=1')
    })

    it('rejects invalid revisions with 400 INVALID_ARGUMENT and revisions above the head with 400 FUTURE_REVISION', async () => {
      const invalid = ['-1', '1.5', 'abc', '1e3', '', ' 1', '0x10', '+1', '99999999999999999999', '9007199254740993', 'Infinity', 'NaN']
      const params: Array<[string, string[]]> = [
        ['/v1/kv', ['revision', 'minModRevision', 'maxModRevision', 'minCreateRevision', 'maxCreateRevision']],
        ['/v1/history', ['from', 'to']],
      ]
      for (const [path, names] of params) {
        for (const name of names) {
          for (const value of invalid) {
            const e = await expectRejected(
              () => api().get(path, { key: 'k', [name]: value }),
              400,
              'INVALID_ARGUMENT',
              `${path} ${name}=${value}`,
            )
            expect(e.details?.field).to.equal(name)
          }
        }
      }
      const head = await api().revision()
      for (const q of [{ revision: head + 1 }, { revision: head + 1000 }, { revision: 2 ** 52 }]) {
        const e = await expectRejected(() => api().range({ key: 'k', ...q }), 400, 'FUTURE_REVISION', JSON.stringify(q))
        expect(e.details?.currentRevision).to.equal(head)
      }
      await expectRejected(() => api().history({ key: 'k', to: head + 1 }), 400, 'FUTURE_REVISION', 'history to')
      await expectRejected(
        () => api().txn({ success: [{ type: 'range', key: 'k', revision: head + 1 }] }),
        400,
        'FUTURE_REVISION',
        'txn range',
      )
      await expectRejected(() => api().compact(head + 1), 400, 'FUTURE_REVISION', 'compact')
      // A continue token can carry a future revision too.
      const token = Buffer.from(
        JSON.stringify({
          v: 1,
          r: head + 5,
          n: Buffer.from('k\0').toString('base64'),
          k: Buffer.from('k').toString('base64'),
          e: Buffer.from('l').toString('base64'),
        }),
      ).toString('base64url')
      await expectRejected(() => api().range({ key: 'k', prefix: true, continue: token }), 400, 'FUTURE_REVISION', 'continue')
    })
  })

  describe('routes and transport', () => {
    it('answers unknown routes and methods with 404 NOT_FOUND', async () => {
      // GET / redirects to the history browser (ui-assets.ts).
      const routes: Array<[string, string]> = [
        ['GET', '/nope'],
        ['GET', '/v1'],
        ['GET', '/v1/kvs'],
        ['GET', '/v1/kv/k'],
        ['GET', '/v2/kv'],
        ['POST', '/v1/kv'],
        ['PATCH', '/v1/kv'],
        ['GET', '/v1/txn'],
        ['PUT', '/v1/txn'],
        ['GET', '/v1/compact'],
        ['DELETE', '/v1/history'],
        ['POST', '/v1/status'],
        ['DELETE', '/healthz'],
        ['GET', '/__proto__'],
        ['GET', '/v1/%2e%2e/status'],
        ['GET', '/metrics/extra'],
      ]
      for (const [method, path] of routes) {
        await expectRejected(() => api().request(method, path), 404, 'NOT_FOUND', `${method} ${path}`)
      }
    })

    it('survives a query string over the header size limit with a 4xx answer', async () => {
      const res = await fetch(`${api().base}/v1/kv?key=${'q'.repeat(20_000)}`)
      await res.arrayBuffer()
      expect(res.status).to.be.oneOf([414, 431])
      expect((await fetch(`${api().base}/healthz`)).status).to.equal(200)
    })

    it('survives clients that send a partial body and disconnect', async () => {
      const { request } = await import('node:http')
      const url = new URL(`${api().base}/v1/txn`)
      await new Promise<void>((resolve) => {
        const req = request({
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': '100000' },
        })
        req.on('error', () => resolve())
        req.write('{"success":[{"type":"put","key":"partial","value":"')
        setTimeout(() => {
          req.destroy()
          resolve()
        }, 50)
      })
      expect(ok(await api().range({ key: 'partial' })).count).to.equal(0)
    })
  })

  // Runs last: mocha runs a suite's own tests before its child suites, so this lives in the last child.
  describe('afterwards', () => {
    it('still serves a normal put, get and health checks afterwards; nothing else was touched', async () => {
      expect((await fetch(`${api().base}/healthz`)).status).to.equal(200)
      expect(ok(await api().get<{ ok: boolean }>('/readyz')).ok).to.equal(true)
      const s = ok(await api().range({ key: 'sentinel' }))
      expect(s.kvs).to.deep.equal([
        { key: 'sentinel', value: 'untouched', createRevision: sentinel.revision, modRevision: sentinel.revision, version: 1 },
      ])
      const put = await api().mustPut('after/all', 'fine', { prevKv: true })
      const got = ok(await api().range({ key: 'after/all' }))
      expect(got.kvs).to.deep.equal([
        { key: 'after/all', value: 'fine', createRevision: put.header.revision, modRevision: put.header.revision, version: 1 },
      ])
      expect(server().process.child.exitCode).to.equal(null)
      expect(server().process.stderr()).to.not.match(/uncaught|unhandled/i)
    })
  })
})
