/**
 * Input at the edges, on real `kvlog serve` processes: JSON nested past maxJsonDepth is refused at write
 * on every door that takes JSON (native API, resource API, etcd's gateway) with JSON_TOO_DEEP, so lists
 * and watches never meet it; a body that is not UTF-8 is refused with INVALID_ENCODING instead of being
 * stored with U+FFFD in place of its bad bytes; the UI's static route answers 404, not 500, for a path
 * no file can have; and with auth on, a namespace left Terminating is finished at start.
 */
import { expect } from 'chai'
import { etcdGrpc } from '../support/etcd-grpc.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { send as sendRaw, type Answer } from './send.js'

const DEPTH = 64

/** Sends `body` as `type`, with root's token when given. */
function send(
  base: string,
  method: string,
  path: string,
  body: string | Buffer,
  type = 'application/json',
  token?: string,
): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': type }
  if (token !== undefined) headers.authorization = `Bearer ${token}`
  return sendRaw(base, method, path, headers, body)
}

/** `levels` arrays nested in each other. */
const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels)
const b64 = (s: string) => Buffer.from(s).toString('base64')

describe('security: input edges', function () {
  this.timeout(60_000)

  describe('JSON depth, encoding and the UI route', () => {
    let server: ServerProcess
    let gw: string
    before(async () => {
      server = await startServerProcess(['--max-json-depth', String(DEPTH)])
      gw = `http://${server.grpc}`
    })
    after(async () => server?.cleanup())

    const configMap = (name: string, extra: string) =>
      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"data":{"a":"b"},"extra":${extra}}`

    it('refuses JSON nested past maxJsonDepth on the native API, the resource API and the gateway', async () => {
      const deep = nested(DEPTH)
      expect(await send(server.http, 'PUT', '/v1/kv', `{"key":"a","value":"v","x":${deep}}`)).to.include({
        status: 400,
        code: 'JSON_TOO_DEEP',
      })
      expect(await send(server.http, 'POST', '/api/v1/namespaces/default/configmaps', configMap('deep', deep))).to.include({
        status: 400,
        code: 'BadRequest',
      })
      expect(await send(gw, 'POST', '/v3/kv/put', `{"key":"${b64('a')}","value":"${b64('v')}","x":${deep}}`)).to.include({
        status: 400,
        code: 'JSON_TOO_DEEP',
      })
      // A merge patch that would deepen a stored object.
      const created = await send(server.http, 'POST', '/api/v1/namespaces/default/configmaps', configMap('shallow', nested(2)))
      expect(created.status, created.text).to.equal(201)
      const patch = await send(
        server.http,
        'PATCH',
        '/api/v1/namespaces/default/configmaps/shallow',
        `{"extra":${deep}}`,
        'application/merge-patch+json',
      )
      expect(patch).to.include({ status: 400, code: 'BadRequest' })
      // Nesting at the limit is fine; the cluster-wide list answers.
      const atLimit = await send(server.http, 'POST', '/api/v1/namespaces/default/configmaps', configMap('edge', nested(DEPTH - 2)))
      expect(atLimit.status, atLimit.text).to.equal(201)
      const list = await fetch(`${server.http}/api/v1/configmaps`)
      expect(list.status).to.equal(200)
      expect(((await list.json()) as { items: unknown[] }).items).to.have.length(2)
    })

    it('leaves out of lists an object nested past maxJsonDepth that came in through a door storing bytes', async () => {
      const obj = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"raw","namespace":"default","uid":"u"},"extra":${nested(DEPTH * 4)}}`
      const put = await send(server.http, 'PUT', '/v1/kv', JSON.stringify({ key: '/registry/configmaps/default/raw', value: obj }))
      expect(put.status, put.text).to.equal(200)
      const list = await fetch(`${server.http}/api/v1/configmaps`)
      expect(list.status).to.equal(200)
      const names = ((await list.json()) as { items: Array<{ metadata: { name: string } }> }).items.map((i) => i.metadata.name)
      expect(names).to.not.include('raw')
    })

    it('refuses bodies that are not UTF-8 with INVALID_ENCODING instead of replacing the bad bytes', async () => {
      const bad = Buffer.concat([Buffer.from('{"key":"k'), Buffer.from([0xff, 0xfe]), Buffer.from('","value":"v"}')])
      expect(await send(server.http, 'PUT', '/v1/kv', bad)).to.include({ status: 400, code: 'INVALID_ENCODING' })
      const gwBad = Buffer.concat([Buffer.from(`{"key":"${b64('k')}","value":"`), Buffer.from([0xc3]), Buffer.from('"}')])
      expect(await send(gw, 'POST', '/v3/kv/put', gwBad)).to.include({ status: 400, code: 'INVALID_ENCODING' })
      const range = await (await fetch(`${server.http}/v1/kv?key=k&prefix=true`)).json()
      expect((range as { kvs: unknown[] }).kvs).to.deep.equal([])
    })

    it('answers 404 for UI paths no file can have, never 500', async () => {
      for (const path of ['/ui/index.html%00.js', '/ui/app/%00x.js', `/ui/${'a'.repeat(5000)}.js`, '/ui/index.html/x.js']) {
        const res = await fetch(`${server.http}${path}`)
        await res.arrayBuffer()
        expect(res.status, path).to.equal(404)
      }
      expect((await fetch(`${server.http}/ui/index.html`)).status).to.equal(200)
    })
  })

  describe('namespace lifecycle with auth on', () => {
    let server: ServerProcess | undefined
    after(async () => server?.cleanup())

    const tokenOf = async (base: string) =>
      ((await (await send(base, 'POST', '/v1/auth/authenticate', '{"name":"root","password":"rootpw"}')).text) as string)
        .split('"token":"')[1]
        .split('"')[0]
    const get = async (base: string, token: string, query: string) =>
      (await (await fetch(`${base}/v1/kv?${query}`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
        kvs?: Array<{ value: string }>
        count?: number
      }

    it('finishes a namespace left Terminating at start, without an error in the log', async () => {
      const args = ['--auth-password-hash-cost', '10', '--log-level', 'info']
      server = await startServerProcess(args)
      const grpc = etcdGrpc(server.grpc)
      await grpc.call('Auth', 'UserAdd', { name: 'root', password: 'rootpw' })
      await grpc.call('Auth', 'UserGrantRole', { user: 'root', role: 'root' })
      await grpc.call('Auth', 'AuthEnable', {})
      grpc.close()
      const token = await tokenOf(server.http)
      const create = async (path: string, body: string) => {
        const res = await send(server!.http, 'POST', path, body, undefined, token)
        expect(res.status, res.text).to.equal(201)
      }
      await create('/api/v1/namespaces', '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"doomed"}}')
      await create('/api/v1/namespaces/doomed/configmaps', '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}')
      // What a crash between marking it Terminating and finishing it leaves behind.
      const kv = await get(server.http, token, 'key=/registry/namespaces/doomed')
      const obj = JSON.parse(kv.kvs![0].value) as { metadata: Record<string, unknown>; status?: Record<string, unknown> }
      obj.metadata.deletionTimestamp = new Date().toISOString()
      obj.status = { phase: 'Terminating' }
      const body = JSON.stringify({ key: '/registry/namespaces/doomed', value: JSON.stringify(obj) })
      const put = await send(server.http, 'PUT', '/v1/kv', body, undefined, token)
      expect(put.status, put.text).to.equal(200)
      await server.stop()

      server = await startServerProcess(args, server.dataDir)
      const fresh = await tokenOf(server.http)
      expect((await get(server.http, fresh, 'key=/registry/namespaces/doomed&countOnly=true')).count).to.equal(0)
      expect((await get(server.http, fresh, 'key=/registry/configmaps/doomed/&prefix=true&countOnly=true')).count).to.equal(0)
      expect(server.stdout()).not.to.include('finishing terminating namespaces failed')
    })
  })
})
