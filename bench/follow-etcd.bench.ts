/**
 * npm run bench:follow-etcd [-- --json] [--quick] [--rate PUTS_PER_S] [--writers W] [--seconds S] [--value-bytes N]
 *
 * How far behind etcd a `kvlog serve --follow-etcd` mirror runs under a steady write load, and what the
 * cutover costs. A real etcd (fsync on, as etcd always does) and a real kvlog process, both on this machine:
 * 1. etcd gets 1,000 keys; kvlog starts following it (it imports the empty data dir first).
 * 2. W writers (default 50) put to etcd, paced to R puts/s in total (default 500; --quick 200), for S seconds
 *    (default 20; --quick 8), over 1,000 keys with N-byte values (default 256).
 * 3. A gRPC watch on kvlog from the first loaded revision stamps each revision's arrival. The lag of a
 *    revision is its arrival on kvlog's watch minus etcd's acknowledgement of the put (what a client that
 *    switched from etcd to kvlog would miss); p50/p99/max over every revision written. kvlog's own view
 *    (GET /v1/follow lagSeconds, sampled every 100 ms) is reported beside it.
 * 4. The writers stop; `POST /v1/follow/cutover` is timed (waits for the mirror, stops it, opens writes),
 *    and the mirror's revision must equal etcd's: nothing lost.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startEtcd } from '../test/support/etcd-process.js'
import { connectEtcd3 } from '../test/support/etcd3-proto.js'
import { startServerProcess } from '../test/support/server-process.js'
import { pacedLoad } from './lib/paced-load.js'
import { benchOptions, JSON_OPTION, QUICK_OPTION } from './lib/options.js'
import { endProgress, formatNumber, percentile, progress, table } from './lib/report.js'

type Message = Record<string, unknown>

const args = benchOptions('npm run bench:follow-etcd -- [options]: how far behind a running etcd kvlog --follow-etcd stays', {
  json: JSON_OPTION,
  quick: QUICK_OPTION,
  rate: { kind: 'number', default: 500, quick: 200, value: 'PUTS_PER_S', help: 'puts a second written to etcd' },
  writers: { kind: 'number', default: 50, value: 'W', help: 'concurrent writers' },
  seconds: { kind: 'number', default: 20, quick: 8, value: 'S', help: 'seconds of writes' },
  'value-bytes': { kind: 'number', default: 256, help: "each put's value size" },
})
const { rate, writers, seconds } = args
const valueBytes = args['value-bytes']
const KEYS = 1000

const tmp = await mkdtemp(join(tmpdir(), 'kvlog-bench-follow-'))
const etcd = await startEtcd()
const source = connectEtcd3(etcd.endpoint)
const value = Buffer.alloc(valueBytes, 'v')
const key = (i: number) => Buffer.from(`/bench/${String(i % KEYS).padStart(4, '0')}`)
try {
  for (let i = 0; i < KEYS; i++) await source.call('KV', 'Put', { key: key(i), value })
  const server = await startServerProcess(['--follow-etcd', etcd.endpoint, '--follow-etcd-status-interval', '100'], join(tmp, 'store'), {
    readyTimeoutMs: 120_000,
  })
  const kvlog = connectEtcd3(server.grpc)
  try {
    const start = Number(((await source.call('Maintenance', 'Status', {})).header as Message).revision) + 1
    const acked = new Map<number, number>()
    const arrived = new Map<number, number>()
    const watch = kvlog.stream('Watch', 'Watch')
    watch.on('error', () => undefined) // the cancel at the end
    watch.on('data', (m: Message) => {
      const now = performance.now()
      for (const e of (m.events ?? []) as Message[]) arrived.set(Number((e.kv as Message).mod_revision), now)
    })
    watch.write({ create_request: { key: Buffer.from('/'), range_end: Buffer.from('0'), start_revision: start } })
    const selfReported: number[] = []
    const sampler = setInterval(() => {
      void fetch(`${server.http}/v1/follow`)
        .then((r) => r.json() as Promise<{ lagSeconds: number }>)
        .then((s) => selfReported.push(s.lagSeconds))
        .catch(() => undefined)
    }, 100)
    const t0 = performance.now()
    const ticker = setInterval(() => progress(`load ${((performance.now() - t0) / 1000).toFixed(0)} / ${seconds} s`), 500)
    const load = pacedLoad(writers, rate, async (i) => {
      const r = await source.call('KV', 'Put', { key: key(i), value })
      acked.set(Number((r.header as Message).revision), performance.now())
    })
    await new Promise((r) => setTimeout(r, seconds * 1000))
    await load.stop()
    clearInterval(ticker)
    clearInterval(sampler)
    endProgress()
    const c0 = performance.now()
    const cut = await fetch(`${server.http}/v1/follow/cutover`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    const cutoverMs = performance.now() - c0
    const cutover = (await cut.json()) as { cutoverRevision?: number; sourceRevision?: number }
    const head = Number(((await source.call('Maintenance', 'Status', {})).header as Message).revision)
    await new Promise((r) => setTimeout(r, 500))
    watch.cancel()
    const lags: number[] = []
    let missing = 0
    for (const [revision, at] of acked) {
      const seen = arrived.get(revision)
      if (seen === undefined) missing++
      else lags.push(Math.max(0, seen - at) / 1000)
    }
    const result = {
      rate,
      writers,
      seconds,
      valueBytes,
      revisions: acked.size,
      lagP50Seconds: percentile(lags, 50),
      lagP99Seconds: percentile(lags, 99),
      lagMaxSeconds: percentile(lags, 100),
      selfReportedP99Seconds: percentile(selfReported, 99),
      cutoverMs,
      cutoverRevision: cutover.cutoverRevision ?? 0,
      etcdRevision: head,
      missing,
    }
    if (args.json) process.stdout.write(JSON.stringify(result) + '\n')
    else
      process.stdout.write(
        table([
          ['load', 'revisions', 'lag p50', 'lag p99', 'lag max', '/v1/follow p99', 'cutover', 'kvlog = etcd'],
          [
            `${rate} puts/s, ${writers} writers, ${seconds} s`,
            formatNumber(acked.size),
            `${result.lagP50Seconds.toFixed(3)} s`,
            `${result.lagP99Seconds.toFixed(3)} s`,
            `${result.lagMaxSeconds.toFixed(3)} s`,
            `${result.selfReportedP99Seconds.toFixed(3)} s`,
            `${cutoverMs.toFixed(0)} ms`,
            `${result.cutoverRevision === head && missing === 0 ? 'yes' : 'NO'} (${result.cutoverRevision} / ${head}, ${missing} missing)`,
          ],
        ]) + '\n',
      )
  } finally {
    kvlog.close()
    await server.cleanup()
  }
} finally {
  source.close()
  await etcd.stop()
  await rm(tmp, { recursive: true, force: true })
}
