/**
 * How long the history browser takes to show its views on a large store: 1,000,000 revisions over
 * 100,000 keys by default (--revisions, --keys; --quick: 100,000 over 10,000). The store is written
 * in-process (fsync off, 256 puts in flight), then served by a real `kvlog serve`, and Debian's chromium
 * (playwright-core) opens each view in a fresh page; a view's time runs from navigation start to the
 * moment its content is on screen. Three rounds; the table gives the median and the slowest.
 * `--dir DIR` keeps the store there and reuses it on the next run.
 *
 *   npm run build && node dist/bench/ui-first-view.bench.js [--json] [--quick] [--dir /tmp/kvlog-ui-bench]
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { openLevelLog } from '../log/level/level-log.js'
import { startServerProcess } from '../test/support/server-process.js'
import { benchOptions, JSON_OPTION, QUICK_OPTION } from './lib/options.js'
import { endProgress, median, progress, table } from './lib/report.js'

const args = benchOptions("npm run bench:ui -- [options]: the browser UI's first view of a big store", {
  json: JSON_OPTION,
  quick: QUICK_OPTION,
  revisions: { kind: 'number', default: 1_000_000, quick: 100_000, help: 'revisions written to the store' },
  keys: { kind: 'number', default: 100_000, quick: 10_000, help: 'distinct keys they write' },
  dir: {
    kind: 'string',
    value: 'DIR',
    help: 'keep the store in DIR and reuse it on the next run (default: a temporary directory, removed)',
  },
})
const { revisions, keys } = args
const keep = args.dir
const dir = keep ?? (await mkdtemp(join(tmpdir(), 'kvlog-ui-bench-')))

const keyOf = (i: number) => `/registry/configmaps/ns-${String(i % 100).padStart(2, '0')}/cm-${String(i % keys).padStart(6, '0')}`

async function build(): Promise<number> {
  const log = await openLevelLog({ dir, fsync: 'never' })
  let next = log.revision - 1
  const started = performance.now()
  await Promise.all(
    Array.from({ length: 256 }, async () => {
      while (next < revisions) {
        const i = next++
        await log.put(
          keyOf(i),
          JSON.stringify({
            kind: 'ConfigMap',
            metadata: { name: `cm-${i % keys}`, generation: Math.floor(i / keys) },
            data: { n: String(i) },
          }),
        )
        if (i % 20_000 === 0) progress(`writing: ${i} of ${revisions} revisions`)
      }
    }),
  )
  endProgress()
  const head = log.revision
  await log.close()
  return (performance.now() - started) / 1000 / Math.max(1, head)
}

const built = keep !== undefined && existsSync(join(dir, 'CURRENT')) ? undefined : await build()
const server = await startServerProcess([], dir, { readyTimeoutMs: 120_000 })
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_BIN ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu'],
})
// The key written last: its newest version is in the key history's first window of revisions.
const hot = keyOf(revisions - 1)
const VIEWS: Array<[string, string, string]> = [
  ['timeline (first view)', '', '.timeline-chart canvas'],
  ['keys: root tree', '#/keys', '.tree a'],
  ['keys: 1,000 configmaps of a namespace', '#/keys?prefix=/registry/configmaps/ns-99/', '.vlist-row'],
  ['keys: one value', `#/keys?prefix=/registry/configmaps/ns-99/&key=${hot}`, '[data-testid="value"]'],
  ['key history (first page)', `#/key?key=${hot}`, '.version'],
  ['revision view', `#/revision?rev=${Math.floor(revisions / 2)}`, '.version'],
  ['status', '#/status', '[data-testid="status-summary"]'],
]
const times = new Map<string, number[]>()
try {
  for (let round = 0; round < 3; round++) {
    for (const [name, hash, ready] of VIEWS) {
      const page = await browser.newPage({ viewport: { width: 1200, height: 800 } })
      const t0 = performance.now()
      await page.goto(`${server.http}/ui/${hash}`)
      await page.locator(ready).first().waitFor({ timeout: 30_000 })
      // The head revision in the header means the first status answer is on screen too.
      await page.waitForFunction("/^[0-9]+$/.test(document.querySelector('[data-testid=head]')?.textContent ?? '')")
      const ms = performance.now() - t0
      times.set(name, [...(times.get(name) ?? []), ms])
      await page.close()
    }
  }
} finally {
  await browser.close()
  await server.cleanup()
  if (keep === undefined) await rm(dir, { recursive: true, force: true })
}

const rows = [...times].map(([name, ms]) => ({ name, median: Math.round(median(ms)), max: Math.round(Math.max(...ms)) }))
if (args.json) {
  process.stdout.write(
    JSON.stringify({
      bench: 'ui-first-view',
      revisions,
      keys,
      writeMsPerRevision: built === undefined ? undefined : built * 1000,
      views: rows,
    }) + '\n',
  )
} else {
  process.stdout.write(`history browser on a store of ${revisions} revisions over ${keys} keys\n`)
  process.stdout.write(table([['view', 'median ms', 'slowest ms'], ...rows.map((r) => [r.name, r.median, r.max])]) + '\n')
}
