/**
 * Protobuf request bodies (apiserver/resources/protobuf.ts):
 *
 * - the bodies kubectl v1.32 sends (fixtures/protobuf.json, captured by fixtures/capture-protobuf.ts)
 *   decode to the JSON kubectl prints for the same command, and a real server stores the same object
 *   from the protobuf body as from that JSON;
 * - the kinds kubectl does not create imperatively (Event, Lease, Node, Pod) decode from bodies written
 *   here field by field with their public field numbers;
 * - a client that prefers protobuf gets protobuf answers for single objects that fit the messages;
 * - CRDs are JSON-only (415); malformed bodies (wrong magic, truncated, wrong wire types, huge lengths,
 *   garbage) are 400 with a Status, write nothing, and the server keeps serving.
 */
import { expect } from 'chai'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import protobuf from 'protobufjs'
import { decodeProtobufBody } from '../../../apiserver/resources/protobuf.js'
import { Registry } from '../../../apiserver/resources/registry.js'
import type { ProtobufFixture } from './fixtures/capture-protobuf.js'
import { expectStatus, Kube, useServer, type Json } from './helpers.js'

const FIXTURES = JSON.parse(
  readFileSync(new URL('../../../../test/apiserver/resources/fixtures/protobuf.json', import.meta.url), 'utf8'),
) as ProtobufFixture[]
const PROTOBUF = 'application/vnd.kubernetes.protobuf'
const MAGIC = Buffer.from('k8s\0', 'latin1')

/** JSON without nulls (kubectl prints `creationTimestamp: null`; the server sets it). */
function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls)
  if (typeof v !== 'object' || v === null) return v
  return Object.fromEntries(
    Object.entries(v)
      .filter(([, x]) => x !== null)
      .map(([k, x]) => [k, withoutNulls(x)]),
  )
}

// A tiny protobuf writer with explicit field numbers, independent of the server's .proto file.
type W = protobuf.Writer
const str = (w: W, field: number, s: string) => w.uint32((field << 3) | 2).string(s)
const int = (w: W, field: number, n: number) => w.uint32(field << 3).int64(n)
const bool = (w: W, field: number, b: boolean) => w.uint32(field << 3).bool(b)
const msg = (w: W, field: number, body: (w: W) => void) => {
  w.uint32((field << 3) | 2).fork()
  body(w)
  return w.ldelim()
}
const entry = (w: W, field: number, k: string, v: (w: W) => void) =>
  msg(w, field, (e) => {
    str(e, 1, k)
    v(e)
  })
const time = (w: W, field: number, seconds: number, nanos = 0) =>
  msg(w, field, (t) => {
    int(t, 1, seconds)
    if (nanos) t.uint32(2 << 3).int32(nanos)
  })
const meta = (w: W, name: string) =>
  msg(w, 1, (m) => {
    str(m, 1, name)
    str(m, 2, '')
    str(m, 3, '')
    int(m, 7, 0)
    msg(m, 8, () => undefined)
    entry(m, 11, 'app', (e) => str(e, 2, 'demo'))
  })

/** The k8s envelope around an object message. */
function envelope(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const w = protobuf.Writer.create()
  msg(w, 1, (t) => {
    str(t, 1, apiVersion)
    str(t, 2, kind)
  })
  w.uint32((2 << 3) | 2).bytes(raw)
  str(w, 3, '')
  str(w, 4, '')
  return Buffer.concat([MAGIC, w.finish()])
}

function object(body: (w: W) => void): Uint8Array {
  const w = protobuf.Writer.create()
  body(w)
  return w.finish()
}

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5) / 1000

/** Kinds kubectl never sends imperatively: body and the JSON it must decode to. */
const HANDMADE: { resource: string; group: string; body: Buffer; json: Json }[] = [
  {
    resource: 'events',
    group: '',
    body: envelope(
      'v1',
      'Event',
      object((w) => {
        meta(w, 'e1')
        msg(w, 2, (o) => {
          str(o, 1, 'Pod')
          str(o, 3, 'p1')
        })
        str(w, 3, 'Started')
        str(w, 4, 'it started')
        msg(w, 5, (s) => str(s, 1, 'kubelet'))
        time(w, 6, T0)
        time(w, 7, T0)
        w.uint32(8 << 3).int32(3)
        str(w, 9, 'Normal')
        time(w, 10, T0, 123_456_000)
      }),
    ),
    json: {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'e1', labels: { app: 'demo' } },
      involvedObject: { kind: 'Pod', name: 'p1' },
      reason: 'Started',
      message: 'it started',
      source: { component: 'kubelet' },
      firstTimestamp: '2026-01-02T03:04:05Z',
      lastTimestamp: '2026-01-02T03:04:05Z',
      count: 3,
      type: 'Normal',
      eventTime: '2026-01-02T03:04:05.123456Z',
    },
  },
  {
    resource: 'leases',
    group: 'coordination.k8s.io',
    body: envelope(
      'coordination.k8s.io/v1',
      'Lease',
      object((w) => {
        meta(w, 'l1')
        msg(w, 2, (s) => {
          str(s, 1, 'node-a')
          s.uint32(2 << 3).int32(40)
          time(s, 4, T0, 5_000)
          s.uint32(5 << 3).int32(0)
        })
      }),
    ),
    json: {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'l1', labels: { app: 'demo' } },
      spec: { holderIdentity: 'node-a', leaseDurationSeconds: 40, renewTime: '2026-01-02T03:04:05.000005Z', leaseTransitions: 0 },
    },
  },
  {
    resource: 'nodes',
    group: '',
    body: envelope(
      'v1',
      'Node',
      object((w) => {
        meta(w, 'n1')
        msg(w, 2, (s) => {
          str(s, 1, '10.0.0.0/24')
          bool(s, 4, true)
          msg(s, 5, (t) => {
            str(t, 1, 'dedicated')
            str(t, 2, 'db')
            str(t, 3, 'NoSchedule')
          })
        })
        msg(w, 3, (s) => {
          entry(s, 1, 'cpu', (e) => msg(e, 2, (q) => str(q, 1, '4')))
          entry(s, 1, 'memory', (e) => msg(e, 2, (q) => str(q, 1, '8Gi')))
          msg(s, 5, (a) => {
            str(a, 1, 'InternalIP')
            str(a, 2, '10.0.0.5')
          })
        })
      }),
    ),
    json: {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n1', labels: { app: 'demo' } },
      spec: { podCIDR: '10.0.0.0/24', unschedulable: true, taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] },
      status: { capacity: { cpu: '4', memory: '8Gi' }, addresses: [{ type: 'InternalIP', address: '10.0.0.5' }] },
    },
  },
  {
    resource: 'pods',
    group: '',
    body: envelope(
      'v1',
      'Pod',
      object((w) => {
        meta(w, 'p1')
        msg(w, 2, (s) => {
          msg(s, 2, (c) => {
            str(c, 1, 'web')
            str(c, 2, 'nginx:1.27')
            str(c, 3, 'nginx')
            msg(c, 6, (p) => p.uint32(3 << 3).int32(8080))
            msg(c, 7, (e) => {
              str(e, 1, 'FROM')
              msg(e, 3, (src) =>
                msg(src, 3, (ref) => {
                  msg(ref, 1, (l) => str(l, 1, 'settings'))
                  str(ref, 2, 'mode')
                }),
              )
            })
            msg(c, 8, (r) => entry(r, 1, 'cpu', (e) => msg(e, 2, (q) => str(q, 1, '500m'))))
          })
          str(s, 3, 'Always')
          int(s, 4, 0)
          str(s, 6, 'ClusterFirst')
          msg(s, 1, (v) => {
            str(v, 1, 'data')
            msg(v, 2, (src) => msg(src, 2, () => undefined))
          })
        })
        msg(w, 3, () => undefined)
      }),
    ),
    json: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p1', labels: { app: 'demo' } },
      spec: {
        containers: [
          {
            name: 'web',
            image: 'nginx:1.27',
            command: ['nginx'],
            ports: [{ containerPort: 8080 }],
            env: [{ name: 'FROM', valueFrom: { configMapKeyRef: { name: 'settings', key: 'mode' } } }],
            resources: { limits: { cpu: '500m' } },
          },
        ],
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 0,
        dnsPolicy: 'ClusterFirst',
        volumes: [{ name: 'data', emptyDir: {} }],
      },
      status: {},
    },
  },
]

describe('resource API: protobuf request bodies', function () {
  this.timeout(60_000)
  const registry = new Registry()

  it('has a kubectl-captured fixture for every kind kubectl creates imperatively', () => {
    expect(FIXTURES.map((f) => f.resource)).to.include.members(['namespaces', 'configmaps', 'secrets'])
    for (const f of FIXTURES) expect(f.contentType).to.equal(PROTOBUF)
  })

  it('each body kubectl sends decodes to the JSON kubectl prints for the same command', () => {
    for (const f of FIXTURES) {
      const decoded = decodeProtobufBody(Buffer.from(f.body, 'base64'), registry.lookup('', 'v1', f.resource)!, 'v1')
      expect(decoded, f.command.join(' ')).to.deep.equal(withoutNulls(f.json))
    }
  })

  it('Event, Lease, Node and Pod bodies decode field by field', () => {
    for (const h of HANDMADE) {
      expect(decodeProtobufBody(h.body, registry.lookup(h.group, 'v1', h.resource)!, 'v1'), h.resource).to.deep.equal(h.json)
    }
  })

  describe('against a server', () => {
    const server = useServer()
    let kube: Kube
    before(() => {
      kube = new Kube(server().process.http)
    })
    /** A protobuf body; the answer in JSON (protobuf answers have their own test). */
    const post = (path: string, body: Uint8Array) =>
      kube.request('POST', path, { raw: body, contentType: PROTOBUF, accept: 'application/json' })
    const pathOf = (group: string, resource: string, namespaced: boolean) =>
      `${group === '' ? '/api/v1' : `/apis/${group}/v1`}${namespaced ? '/namespaces/default' : ''}/${resource}`
    /** What the server adds or names differently between two creates of the same object. */
    const comparable = (o: Json) => {
      const { uid: _u, creationTimestamp: _c, resourceVersion: _r, name: _n, ...metadata } = o.metadata
      return { ...o, metadata }
    }

    it('stores the same object from the protobuf body as from the JSON one', async () => {
      for (const f of FIXTURES) {
        const rt = registry.lookup('', 'v1', f.resource)!
        const path = pathOf('', f.resource, rt.namespaced)
        const fromProto = await post(path, Buffer.from(f.body, 'base64'))
        expect(fromProto.status, JSON.stringify(fromProto.body)).to.equal(201)
        const json = f.json as Json
        const fromJson = await kube.mustCreate(path, { ...json, metadata: { ...json.metadata, name: `${json.metadata.name}-json` } })
        expect(comparable(fromProto.body), f.command.join(' ')).to.deep.equal(comparable(fromJson))
        expect(comparable((await kube.get(`${path}/${json.metadata.name}`)).body)).to.deep.equal(comparable(fromJson))
      }
      for (const h of HANDMADE) {
        const rt = registry.lookup(h.group, 'v1', h.resource)!
        const created = await post(pathOf(h.group, h.resource, rt.namespaced), h.body)
        expect(created.status, JSON.stringify(created.body)).to.equal(201)
        expect(created.body.metadata.name).to.equal(h.json.metadata.name)
      }
    })

    it('answers protobuf to a client that prefers it: each object decodes to its JSON answer', async () => {
      const objects: [string, string, boolean][] = [
        ...FIXTURES.map((f): [string, string, boolean] => ['', f.resource, registry.lookup('', 'v1', f.resource)!.namespaced]),
        ...HANDMADE.map((h): [string, string, boolean] => [h.group, h.resource, registry.lookup(h.group, 'v1', h.resource)!.namespaced]),
      ]
      for (const [group, resource, namespaced] of objects) {
        const list = (await kube.get(pathOf(group, resource, namespaced))).body
        for (const item of list.items) {
          const path = `${pathOf(group, resource, namespaced)}/${item.metadata.name}`
          const res = await fetch(`${kube.base}${path}`, { headers: { accept: `${PROTOBUF}, application/json` } })
          expect(res.headers.get('content-type'), path).to.equal(PROTOBUF)
          const bytes = Buffer.from(await res.arrayBuffer())
          const json = (await kube.get(path)).body
          expect(decodeProtobufBody(bytes, registry.lookup(group, 'v1', resource)!, 'v1'), path).to.deep.equal(json)
        }
      }
    })

    it('answers JSON for an object with fields the messages do not declare, for lists and for JSON-first clients', async () => {
      const pods = pathOf('', 'pods', true)
      await kube.mustCreate(pods, {
        metadata: { name: 'extra' },
        spec: { containers: [{ name: 'c', image: 'x' }], affinity: { nodeAffinity: {} } },
      })
      for (const [path, accept] of [
        [`${pods}/extra`, `${PROTOBUF}, application/json`],
        [pods, `${PROTOBUF}, application/json`],
        [`${pods}/p1`, `application/json, ${PROTOBUF}`],
      ]) {
        const res = await fetch(`${kube.base}${path}`, { headers: { accept } })
        expect(res.headers.get('content-type'), path).to.match(/^application\/json/)
        await res.arrayBuffer()
      }
    })

    it('PUT takes a protobuf body too', async () => {
      const body = envelope(
        'v1',
        'ConfigMap',
        object((w) => {
          meta(w, 'c1')
          entry(w, 2, 'a', (e) => str(e, 2, 'changed'))
        }),
      )
      const r = await kube.request('PUT', '/api/v1/namespaces/default/configmaps/c1', { raw: body, contentType: PROTOBUF })
      expect(r.status, JSON.stringify(r.body)).to.equal(200)
      expect(r.body.data).to.deep.equal({ a: 'changed' })
    })

    it('CRDs and CustomResourceDefinitions are JSON-only: 415', async () => {
      const crd = envelope(
        'apiextensions.k8s.io/v1',
        'CustomResourceDefinition',
        object((w) => meta(w, 'x.example.com')),
      )
      expectStatus(await post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd), 415, 'UnsupportedMediaType')
      await kube.mustCreate('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
        metadata: { name: 'gadgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Namespaced',
          names: { plural: 'gadgets', kind: 'Gadget' },
          versions: [{ name: 'v1', served: true, storage: true }],
        },
      })
      const gadget = envelope(
        'example.com/v1',
        'Gadget',
        object((w) => meta(w, 'g1')),
      )
      expectStatus(await post('/apis/example.com/v1/namespaces/default/gadgets', gadget), 415, 'UnsupportedMediaType')
      // PATCH and DELETE bodies are never protobuf.
      const cm = Buffer.from(FIXTURES[1].body, 'base64')
      expectStatus(
        await kube.request('PATCH', '/api/v1/namespaces/default/configmaps/c1', { raw: cm, contentType: PROTOBUF }),
        415,
        'UnsupportedMediaType',
      )
      expectStatus(
        await kube.request('DELETE', '/api/v1/namespaces/default/configmaps/c1', { raw: cm, contentType: PROTOBUF }),
        415,
        'UnsupportedMediaType',
      )
    })

    it('an unknown field number or a kind that does not match the URL is 400', async () => {
      const extra = envelope(
        'v1',
        'ConfigMap',
        object((w) => {
          meta(w, 'extra')
          str(w, 99, 'x')
        }),
      )
      expectStatus(await post('/api/v1/namespaces/default/configmaps', extra), 400, 'BadRequest')
      const secret = envelope(
        'v1',
        'Secret',
        object((w) => meta(w, 'wrong-kind')),
      )
      expectStatus(await post('/api/v1/namespaces/default/configmaps', secret), 400, 'BadRequest')
    })

    describe('malformed bodies (fast-check): 400 with a Status, nothing written, still serving', () => {
      const CMS = '/api/v1/namespaces/default/configmaps'
      const valid = Buffer.from(FIXTURES.find((f) => f.resource === 'configmaps')!.body, 'base64')
      let revision: number
      before(async () => {
        revision = await kube.revision()
      })
      afterEach(async () => {
        expect(await kube.revision()).to.equal(revision)
        expect((await kube.get(`${CMS}/c1`)).status).to.equal(200)
      })

      it('wrong magic', async () => {
        await fc.assert(
          fc.asyncProperty(fc.uint8Array({ minLength: 0, maxLength: 4 }), async (prefix) => {
            fc.pre(!Buffer.from(prefix).equals(MAGIC))
            expectStatus(await post(CMS, Buffer.concat([prefix, valid.subarray(4)])), 400, 'BadRequest')
          }),
          { numRuns: 40 },
        )
      })

      it("truncated anywhere before the envelope's trailing empty fields", async () => {
        // The envelope ends with contentEncoding "" and contentType "" (4 bytes): any cut before them
        // leaves the object or the envelope incomplete.
        expect([...valid.subarray(-4)]).to.deep.equal([0x1a, 0, 0x22, 0])
        await fc.assert(
          fc.asyncProperty(fc.integer({ min: 4, max: valid.length - 5 }), async (cut) => {
            expectStatus(await post(CMS, valid.subarray(0, cut)), 400, 'BadRequest')
          }),
          { numRuns: 60 },
        )
      })

      it('wrong wire types for declared fields', async () => {
        // ConfigMap: 1 metadata (message), 2 data (map), 3 binaryData (map), 4 immutable (varint).
        const declared: Record<number, number> = { 1: 2, 2: 2, 3: 2, 4: 0 }
        await fc.assert(
          fc.asyncProperty(
            fc.integer({ min: 1, max: 4 }),
            fc.constantFrom(0, 1, 2, 5),
            fc.uint8Array({ minLength: 8, maxLength: 8 }),
            async (field, wire, payload) => {
              fc.pre(declared[field] !== wire)
              const w = protobuf.Writer.create()
              meta(w, 'wire')
              w.uint32((field << 3) | wire)
              if (wire === 0) w.uint64(7)
              else if (wire === 1) w.fixed64(7)
              else if (wire === 5) w.fixed32(7)
              else w.bytes(payload)
              expectStatus(await post(CMS, envelope('v1', 'ConfigMap', w.finish())), 400, 'BadRequest')
            },
          ),
          { numRuns: 40 },
        )
      })

      it('huge lengths', async () => {
        await fc.assert(
          fc.asyncProperty(fc.integer({ min: 1_000, max: 2 ** 31 - 1 }), fc.constantFrom(1, 2), async (length, where) => {
            // A length prefix far past the end: for the envelope's raw (where 1) or inside the object (where 2).
            const w = protobuf.Writer.create()
            if (where === 1) {
              msg(w, 1, (t) => str(t, 2, 'ConfigMap'))
              w.uint32((2 << 3) | 2).uint32(length)
              w.bytes(new Uint8Array(8))
              expectStatus(await post(CMS, Buffer.concat([MAGIC, w.finish()])), 400, 'BadRequest')
            } else {
              w.uint32((1 << 3) | 2)
                .uint32(length)
                .uint32(0)
              expectStatus(await post(CMS, envelope('v1', 'ConfigMap', w.finish())), 400, 'BadRequest')
            }
          }),
          { numRuns: 40 },
        )
      })

      it('random garbage after the magic never writes or breaks the server', async () => {
        await fc.assert(
          fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 200 }), async (garbage) => {
            const r = await post(CMS, Buffer.concat([MAGIC, garbage]))
            expect(r.body.kind).to.equal('Status')
            expect([400, 422]).to.include(r.status)
          }),
          { numRuns: 80 },
        )
      })
    })
  })
})
