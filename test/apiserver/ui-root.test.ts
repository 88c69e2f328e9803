/** `GET /` on the native port of a server that serves the history browser redirects there. */
import { expect } from 'chai'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'

describe('native port: GET / leads to the history browser', function () {
  this.timeout(60_000)
  let server: ServerProcess
  before(async () => {
    server = await startServerProcess()
  })
  after(async () => {
    await server?.cleanup()
  })

  it('redirects to /ui/, which serves the page', async () => {
    const res = await fetch(`${server.http}/`, { redirect: 'manual' })
    expect(res.status).to.be.oneOf([301, 302])
    expect(res.headers.get('location')).to.equal('/ui/')
    const page = await fetch(`${server.http}/`)
    expect(page.status).to.equal(200)
    expect(page.headers.get('content-type')).to.match(/^text\/html/)
  })
})
