/**
 * A nats-server stopped (SIGSTOP) under a member's NATS connection, with one in-process member over three
 * real nats-servers: the socket stays open, so only the client's pings tell the server is gone. The
 * member takes the connection for dead after natsMaxPingsOut unanswered pings, counts it
 * (kvlog_cluster_nats_disconnects), logs it, and reconnects through another server while the stopped one
 * is still stopped.
 */
import { expect } from 'chai'
import { inProcessMembers } from '../../support/cluster-members.js'
import { waitFor } from '../../support/wait.js'

/** The nats-server whose monitoring lists the client named `client`. */
async function serverOf(servers: Array<{ name: string; monitorUrl: string }>, client: string): Promise<string> {
  for (const s of servers) {
    const connz = (await (await fetch(`${s.monitorUrl}/connz`)).json()) as { connections?: Array<{ name?: string }> }
    if ((connz.connections ?? []).some((c) => c.name === client)) return s.name
  }
  return ''
}

describe("JetStreamLog: a stopped nats-server under a member's connection", function () {
  this.timeout(120_000)
  const members = inProcessMembers('pings')

  it('is taken for dead by the pings, counted and logged, and the member reconnects elsewhere', async () => {
    const lines: string[] = []
    const a = await members.start('a', { natsReplicas: 3, natsPingInterval: 200, natsMaxPingsOut: 2, log: (line) => void lines.push(line) })
    await waitFor('a to lead', () => a.isLeading, 30_000)
    const servers = members.nats().servers
    const server = await serverOf(servers, 'kvlog pings/a')
    const n = servers.findIndex((s) => s.name === server)
    expect(a.metrics.natsDisconnects).to.equal(0)
    await members.nats().pause(n)
    try {
      await waitFor('the connection taken for dead', () => a.metrics.natsDisconnects > 0, 60_000)
      await waitFor('the member reconnected', () => lines.some((l) => l.startsWith('kvlog: NATS connection back')), 60_000)
      expect(
        lines.some((l) => l.includes(`lost or not answering pings`)),
        lines.join('\n'),
      ).to.equal(true)
      expect(a.metrics.natsDisconnects).to.equal(1)
    } finally {
      members.nats().resume(n)
    }
  })
})
