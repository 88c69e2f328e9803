/**
 * The adversarial battery, short form: floods (PING, SETTINGS, rapid reset, RST_STREAM), malformed frames,
 * slowloris, idle and half-open connections, HPACK bombs and oversized header lists (attacks.ts), on the
 * etcd client port and the native port of one real `kvlog serve` with its default limits and auth on. After each
 * attack the server must be up, /healthz must answer, and the event loop's largest delay and the peak
 * RSS must stay within bounds; the figures are printed as a table.
 */
import { expect } from 'chai'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { ATTACKS } from './attacks.js'
import { MiB, enableAuth, eventLoopMaxMs, figures, type Figures } from './server-health.js'

const MAX_RSS = 512 * MiB
const MAX_DELAY_MS = 1000

type Row = { port: string; attack: string } & Figures

describe('security: the adversarial battery on both ports', function () {
  this.timeout(120_000)
  let server: ServerProcess
  const rows: Row[] = []
  before(async () => {
    server = await startServerProcess([], undefined, { nodeArgs: ['--max-old-space-size=1024'] })
    await enableAuth(server.grpc)
    await eventLoopMaxMs(server.http) // starts the delay's count afresh
  })
  after(async () => {
    console.log(
      rows
        .map(
          (r) =>
            `      ${r.port.padEnd(6)} ${r.attack.padEnd(90)} healthz ${r.healthzMs.toFixed(0).padStart(4)} ms  loop delay ${r.eventLoopMaxMs.toFixed(0).padStart(4)} ms  peak RSS ${r.peakRssMiB.toFixed(0)} MiB`,
        )
        .join('\n'),
    )
    await server.cleanup()
  })

  for (const attack of ATTACKS) {
    it(`${attack.port} port: ${attack.name}`, async () => {
      await attack.run(attack.port === 'etcd' ? server.grpc : server.http.replace(/^https?:\/\//, ''))
      expect(server.child.exitCode, server.stderr()).to.equal(null)
      const row: Row = { port: attack.port, attack: attack.name, ...(await figures(server.http, server.child.pid!)) }
      rows.push(row)
      expect(row.healthzMs).to.be.below(MAX_DELAY_MS)
      expect(row.eventLoopMaxMs).to.be.below(MAX_DELAY_MS)
      expect(row.peakRssMiB * MiB).to.be.below(MAX_RSS)
    })
  }
})
