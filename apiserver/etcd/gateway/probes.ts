/**
 * etcd's /livez and /readyz on the client port (etcd 3.4.29 and 3.5.11 on, KEP-4331; kubeadm's probes
 * use them): each runs its checks and answers 200 "ok", or 503 listing the failed ones and "health check
 * failed"; `?verbose` lists every check, `[+]name ok` or `[-]name failed: reason`.
 *
 * - serializable_read (both): the store answers a local read within PROBE_TIMEOUT_MS;
 * - data_corruption (readyz): no CORRUPT alarm is active;
 * - linearizable_read (readyz): the server serves (started, not draining; a cluster member caught up with
 *   the log, so its reads are linearizable).
 */
import { within } from '../../../log/within.js'
import type { AlarmEntry } from '../alarms.js'

/** A probe's read that has not answered by then fails it: a hung store is not live. */
export const PROBE_TIMEOUT_MS = 5000

export interface ProbeDeps {
  /** One local read of the store; nothing read reaches the caller. */
  read: () => Promise<unknown>
  /** The active etcd alarms. */
  alarms: () => Promise<AlarmEntry[]>
  ready: () => Promise<boolean>
}

type Check = [name: string, run: () => Promise<string | undefined>]

export const PROBE_PATHS = ['/livez', '/readyz'] as const

export async function probe(
  deps: ProbeDeps,
  path: (typeof PROBE_PATHS)[number],
  verbose: boolean,
): Promise<{ status: number; body: string }> {
  const serializable: Check = [
    'serializable_read',
    async () => within(deps.read(), PROBE_TIMEOUT_MS, () => new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)).then(() => undefined),
  ]
  const checks: Check[] =
    path === '/livez'
      ? [serializable]
      : [
          [
            'data_corruption',
            async () => ((await deps.alarms()).some((a) => a.alarm === 'CORRUPT') ? 'alarm activated: CORRUPT' : undefined),
          ],
          serializable,
          ['linearizable_read', async () => ((await deps.ready()) ? undefined : 'not ready: starting, draining or behind the cluster log')],
        ]
  const lines: string[] = []
  let failed = false
  for (const [name, run] of checks) {
    const reason = await run().catch((err: unknown) => String(err))
    if (reason !== undefined) failed = true
    if (reason !== undefined) lines.push(`[-]${name} failed: ${reason}`)
    else if (verbose) lines.push(`[+]${name} ok`)
  }
  lines.push(failed ? 'health check failed' : 'ok')
  return { status: failed ? 503 : 200, body: lines.join('\n') }
}
