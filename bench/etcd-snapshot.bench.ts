/**
 * npm run bench:etcd-snapshot [-- --revisions N] [--keys K] [--value BYTES] [--json]
 *
 * The etcd snapshot format's cost, on a LevelLog in a temp dir: N revisions (default 100,000) of puts over
 * K keys (default 10,000) with BYTES-byte values (default 256), 512 in flight (group commit), compacted at
 * N / 2 so the file holds a floor state and N / 2 revisions of history. Then:
 *   export   exportEtcdSnapshot (what Maintenance.Snapshot and `kvlog export` do): ms, file MiB, key
 *            revisions/s, and the process's peak RSS growth over it (the file is built in memory)
 *   import   importEtcdSnapshot of that file into a new data dir (`kvlog import --from-etcd-snapshot`):
 *            ms and key revisions/s
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { exportEtcdSnapshot } from '../apiserver/etcd-snapshot/export.js'
import { importEtcdSnapshot } from '../tools/import-etcd-snapshot.js'
import { openLog } from '../log/index.js'
import { benchOptions, JSON_OPTION } from './lib/options.js'

const args = benchOptions("npm run bench:etcd-snapshot -- [options]: the etcd snapshot format's export and import", {
  json: JSON_OPTION,
  revisions: { kind: 'number', default: 100_000, positive: true, help: 'revisions written (compacted at half)' },
  keys: { kind: 'number', default: 10_000, positive: true, value: 'K', help: 'keys they write' },
  value: { kind: 'number', default: 256, value: 'BYTES', help: "each put's value size" },
})
const { revisions, keys, json } = args
const valueBytes = args.value

const dir = await mkdtemp(join(tmpdir(), 'kvlog-bench-etcd-snap-'))
try {
  const log = await openLog({ dir: join(dir, 'src') })
  const value = Buffer.alloc(valueBytes, 'v')
  let next = 0
  await Promise.all(
    Array.from({ length: 512 }, async () => {
      for (let i = next++; i < revisions; i = next++) await log.put(`/bench/${String(i % keys).padStart(8, '0')}`, value)
    }),
  )
  await log.compact(Math.floor(log.revision / 2), { physical: true })

  const rssBefore = process.memoryUsage().rss
  let rssPeak = rssBefore
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20)
  let t = performance.now()
  const snap = await exportEtcdSnapshot(log)
  const exportMs = performance.now() - t
  clearInterval(sampler)
  rssPeak = Math.max(rssPeak, process.memoryUsage().rss)
  await log.close()
  const file = join(dir, 'snap.db')
  await writeFile(file, Buffer.concat(snap.parts))

  t = performance.now()
  const imported = await importEtcdSnapshot(file, join(dir, 'imported'))
  const importMs = performance.now() - t

  const result = {
    revisions: snap.revision,
    compactRevision: snap.compactRevision,
    keyEntries: snap.keyEntries,
    fileMiB: +(snap.size / 2 ** 20).toFixed(1),
    exportMs: Math.round(exportMs),
    exportEntriesPerSecond: Math.round(snap.keyEntries / (exportMs / 1000)),
    exportRssGrowthMiB: Math.round((rssPeak - rssBefore) / 2 ** 20),
    importMs: Math.round(importMs),
    importEntriesPerSecond: Math.round(snap.keyEntries / (importMs / 1000)),
    importedRevision: imported.revision,
  }
  if (json) process.stdout.write(JSON.stringify(result) + '\n')
  else for (const [k, v] of Object.entries(result)) process.stdout.write(`${k.padEnd(24)} ${v}\n`)
} finally {
  await rm(dir, { recursive: true, force: true })
}
