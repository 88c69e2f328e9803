/**
 * Ports for servers the tests and benchmarks start (etcd, nats-server, `kvlog serve` on a fixed port).
 *
 * A port the OS hands out for `listen(0)` comes from the ephemeral range, the same range it takes the
 * local ports of outgoing connections from: with test files running in parallel, some client's connect
 * can take that port between our close and the server's bind ("address already in use"). So the ports
 * here are picked at random *below* the ephemeral range (read from /proc), checked free by binding them,
 * and never handed out twice by one process.
 */
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

/** Lowest port picked. */
const LOW = 10_000
const handedOut = new Set<number>()

/** The first port of the OS's ephemeral range (Linux default 32768). */
function ephemeralLow(): number {
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    return Number.isInteger(first) && first > LOW + 1_000 ? first : 32_768
  } catch {
    return 32_768
  }
}

const HIGH = ephemeralLow()

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/** A port on 127.0.0.1 that was free a moment ago, outside the ephemeral range; the caller binds it soon after. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 1_000; attempt++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW))
    if (handedOut.has(port)) continue
    if (await bindable(port)) {
      handedOut.add(port)
      return port
    }
  }
  throw new Error(`no free port found in ${LOW}-${HIGH - 1}`)
}
