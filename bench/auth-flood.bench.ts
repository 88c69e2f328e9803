/**
 * npm run bench:auth-flood [-- --json] [--quick] [--rounds N] [--logins N] [--sources N] [--cost LOG2N] [--nice N]
 *
 * What a flood of wrong logins costs the other clients. A real `kvlog serve` with auth enabled (scrypt
 * cost 2^14 by default, authMaxPendingLogins 64, the low hashing thread at nice --nice, by default
 * authHashThreadNice's); a control client with a token reads one key in a loop
 * (GET /v1/kv, one request at a time) from this process. Each round: 3 s of control reads alone (idle),
 * then a separate process sends N wrong logins (default 1,000: ten bursts of 100, 100 ms apart, to
 * POST /v1/auth/authenticate, half for root, half for unknown users) while the control reads go on,
 * until every login is answered. The logins come from --sources client addresses (default 1:
 * 127.0.0.1; more are 127.0.0.2, ... on loopback, taken in turn): from one address the login throttle
 * refuses all but the first few unchecked, from many it lets each address's first failures through to a
 * password check, so the hashing threads and their priority are what the control reads feel. Reported per round: the control reads' p50 and p99 idle and during the
 * flood, their ratio, and how the logins were answered (UNAUTHENTICATED after a password check,
 * UNAVAILABLE when too many checks were waiting). The target: p99 during ≤ 2 × p99 idle.
 *
 * To profile the server, start it yourself under `node --cpu-prof bin/kvlog serve ...` with auth set up
 * and point the bench at it with KVLOG_BENCH_HTTP (the bench then skips the setup when auth is on).
 */
import { spawn } from 'node:child_process'
import { request } from 'node:http'
import { fileURLToPath } from 'node:url'
import { KvlogClient } from '../clients/index.js'
import { DEFAULT_CONFIG } from '../config/schema.js'
import { benchOptions, JSON_OPTION, QUICK_OPTION } from './lib/options.js'
import { endProgress, percentile, progress, table } from './lib/report.js'
import { startKvlog } from './lib/server.js'

const SELF = fileURLToPath(import.meta.url)

const OPTIONS = {
  json: JSON_OPTION,
  quick: QUICK_OPTION,
  rounds: { kind: 'number', default: 3, quick: 1, help: 'rounds of idle reads then a flood' },
  logins: { kind: 'number', default: 1000, help: 'wrong logins per flood (bursts of 100, 100 ms apart)' },
  sources: { kind: 'number', default: 1, positive: true, help: 'client addresses the logins come from, in turn (127.0.0.1, .2, ...)' },
  cost: { kind: 'number', default: 14, value: 'LOG2N', help: 'scrypt cost (authPasswordHashCost)' },
  nice: {
    kind: 'number',
    default: DEFAULT_CONFIG.authHashThreadNice,
    help: 'the nice value of the thread for checks beyond the budget (authHashThreadNice)',
  },
} as const

/** The k-th loopback client address: 127.0.0.1, 127.0.0.2, ... */
function loopback(k: number): string {
  return `127.0.${Math.floor(k / 254)}.${1 + (k % 254)}`
}

/** One wrong login from `localAddress`; resolves with the answer's error code. */
function wrongLogin(url: URL, name: string, localAddress: string): Promise<string> {
  const body = JSON.stringify({ name, password: 'wrong' })
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => (text += d))
        res.on('end', () => {
          let code: string | undefined
          try {
            code = (JSON.parse(text) as { error?: { code?: string } }).error?.code
          } catch {
            // not JSON: the status says it
          }
          resolve(code ?? `HTTP ${res.statusCode}`)
        })
      },
    )
    req.on('error', (err) => resolve(`failed: ${err.message}`))
    req.end(body)
  })
}

/**
 * Flood mode (a child process): N wrong logins from `sources` addresses in turn, in bursts of 100 every
 * 100 ms; prints the answers' counts.
 */
async function flood(http: string, logins: number, sources: number): Promise<void> {
  const url = new URL('/v1/auth/authenticate', http)
  const answers: Array<Promise<string>> = []
  for (let i = 0; i < logins; i++) {
    answers.push(wrongLogin(url, i % 2 === 0 ? 'root' : `ghost${i}`, loopback(i % sources)))
    if (i % 100 === 99) await new Promise((r) => setTimeout(r, 100))
  }
  const counts: Record<string, number> = {}
  for (const code of await Promise.all(answers)) counts[code] = (counts[code] ?? 0) + 1
  process.stdout.write(JSON.stringify(counts) + '\n')
}

function runFlood(http: string, logins: number, sources: number): Promise<Record<string, number>> {
  const child = spawn(process.execPath, [SELF, '--flood', http, String(logins), String(sources)], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  return new Promise((resolve, reject) =>
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as Record<string, number>) : reject(new Error(`flooder exited ${code}`)),
    ),
  )
}

async function main(): Promise<void> {
  const args = benchOptions('npm run bench:auth-flood -- [options]: what a flood of wrong logins costs the other clients', OPTIONS)
  const { rounds, logins, sources, cost, nice } = args
  const server = await startKvlog(['--auth-password-hash-cost', String(cost), '--auth-hash-thread-nice', String(nice)])
  try {
    const admin = new KvlogClient({ endpoint: server.http })
    if (!(await admin.auth.status()).enabled) {
      await admin.auth.addUser('root', 'rootpw')
      await admin.auth.grantRole('root', 'root')
      await admin.auth.enable()
    }
    const control = new KvlogClient({ endpoint: server.http, credentials: { user: 'root', password: 'rootpw' } })
    await control.put('bench/key', 'value')
    const rows: Array<Array<string | number>> = [
      ['round', 'idle p50', 'idle p99', 'flood p50', 'flood p99', 'p99 ratio', 'reads', 'logins answered'],
    ]
    const results: unknown[] = []
    for (let round = 1; round <= rounds; round++) {
      const idle: number[] = []
      const during: number[] = []
      const state = { phase: 'idle' as 'idle' | 'flood' | 'done' }
      const loop = (async () => {
        while (state.phase !== 'done') {
          const t0 = performance.now()
          await control.get('bench/key')
          ;(state.phase === 'idle' ? idle : during).push(performance.now() - t0)
        }
      })()
      progress(`round ${round}: idle`)
      await new Promise((r) => setTimeout(r, 3000))
      progress(`round ${round}: ${logins} wrong logins`)
      state.phase = 'flood'
      const counts = await runFlood(server.http, logins, sources)
      state.phase = 'done'
      await loop
      const f = (ms: number) => `${ms.toFixed(1)} ms`
      const ratio = percentile(during, 99) / percentile(idle, 99)
      rows.push([
        round,
        f(percentile(idle, 50)),
        f(percentile(idle, 99)),
        f(percentile(during, 50)),
        f(percentile(during, 99)),
        `${ratio.toFixed(2)}x`,
        `${idle.length} / ${during.length}`,
        JSON.stringify(counts),
      ])
      results.push({
        round,
        idle: { p50: percentile(idle, 50), p99: percentile(idle, 99) },
        flood: { p50: percentile(during, 50), p99: percentile(during, 99) },
        ratio,
        counts,
      })
      await new Promise((r) => setTimeout(r, 2000)) // the checks that were let in finish
    }
    endProgress()
    if (args.json) console.log(JSON.stringify({ logins, sources, cost, nice, results }))
    else console.log(table(rows))
  } finally {
    await server.stop()
  }
}

if (process.argv[2] === '--flood') await flood(process.argv[3]!, Number(process.argv[4]), Number(process.argv[5]))
else await main()
