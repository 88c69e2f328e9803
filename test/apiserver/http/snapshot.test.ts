/**
 * GET /v1/snapshot against a real `kvlog serve` process: the headers, the stream's shape and checksum,
 * and a client that stops reading and goes away mid-stream (the server carries on and serves the next).
 */
import { createHash } from 'node:crypto'
import { request } from 'node:http'
import { expect } from 'chai'
import { ok, useServer } from './helpers.js'

const MAGIC = Buffer.from('KVLOGSNAP1\n', 'ascii')

describe('native HTTP API: /v1/snapshot (real process)', function () {
  this.timeout(30_000)
  const server = useServer()
  const api = () => server().api

  async function download(): Promise<{ res: Response; bytes: Buffer }> {
    const res = await fetch(`${api().base}/v1/snapshot`)
    return { res, bytes: Buffer.from(await res.arrayBuffer()) }
  }

  it('streams the whole database at one revision: headers, magic, 512-byte alignment, trailing sha256', async () => {
    for (let i = 0; i < 20; i++) await api().mustPut(`/snap/${i}`, `value ${i}`)
    const revision = await api().revision()
    const { res, bytes } = await download()
    expect(res.status).to.equal(200)
    expect(res.headers.get('content-type')).to.equal('application/octet-stream')
    expect(Number(res.headers.get('x-kvlog-revision'))).to.equal(revision)
    expect(Number(res.headers.get('x-kvlog-snapshot-size-estimate'))).to.be.at.least(0)
    expect(bytes.subarray(0, MAGIC.length).equals(MAGIC)).to.equal(true)
    expect(bytes.length % 512).to.equal(32)
    const body = bytes.subarray(0, bytes.length - 32)
    expect(
      createHash('sha256')
        .update(body)
        .digest()
        .equals(bytes.subarray(bytes.length - 32)),
    ).to.equal(true)
    for (let i = 0; i < 20; i++) expect(body.includes(Buffer.from(`value ${i}`))).to.equal(true)
    // Nothing changed: the same bytes again.
    expect((await download()).bytes.equals(bytes)).to.equal(true)
    const unknown = await api().get('/v1/snapshot', { foo: '1' })
    expect(unknown.status).to.equal(400)
  })

  it('a client that stops reading and disconnects mid-stream does not disturb the server', async () => {
    // About 3 MB, far more than the socket buffers, so the server must wait for the reader.
    const big = 'x'.repeat(100_000)
    await Promise.all(Array.from({ length: 30 }, (_, i) => api().mustPut(`/big/${i}`, `${i}${big}`)))
    let received = 0
    await new Promise<void>((resolve, reject) => {
      const req = request(`${api().base}/v1/snapshot`, (res) => {
        res.once('data', (chunk: Buffer) => {
          received += chunk.length
          res.pause()
          // Give the server time to fill the socket and block on it, then go away.
          setTimeout(() => {
            req.destroy()
            resolve()
          }, 300)
        })
      })
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)))
      req.end()
    })
    expect(received).to.be.above(0)
    await api().mustPut('/after', 'disconnect')
    const { bytes } = await download()
    expect(bytes.length).to.be.above(3_000_000)
    expect(bytes.includes(Buffer.from('disconnect'))).to.equal(true)
    expect(ok(await api().get<{ ok: boolean }>('/readyz')).ok).to.equal(true)
  })
})
