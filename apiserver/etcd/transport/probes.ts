/**
 * GET /livez and GET /readyz on the etcd client port, as etcd 3.5+ answers them (kubeadm's probes use
 * them): 200 "ok" when a read of the store answers within `timeoutMs`, else 503 "<probe> check failed".
 * etcd's checks are a serializable read (livez) and that plus a linearizable read and no corruption alarm
 * (readyz); kvlog's reads are all served by the log itself, so both probes are the one read.
 * Everything else goes to `next`.
 */
import type { Exchange } from './exchange.js'

const PROBES = new Set(['/livez', '/readyz'])

export function withProbes(
  check: () => Promise<unknown>,
  timeoutMs: number,
  next: (exchange: Exchange) => void,
): (exchange: Exchange) => void {
  return (exchange) => {
    const path = exchange.url.split('?')[0] ?? ''
    if (!PROBES.has(path)) return next(exchange)
    exchange.body.resume()
    const answer = (status: number, text: string) => {
      exchange.respond(status, { 'content-type': 'text/plain; charset=utf-8' })
      exchange.end(exchange.method === 'HEAD' ? undefined : text)
    }
    if (exchange.method !== 'GET' && exchange.method !== 'HEAD') return answer(405, 'Method Not Allowed')
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), timeoutMs)
    })
    Promise.race([check(), late])
      .then(
        () => answer(200, 'ok'),
        () => answer(503, `${path.slice(1)} check failed`),
      )
      .finally(() => clearTimeout(timer))
  }
}
