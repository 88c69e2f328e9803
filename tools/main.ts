/**
 * The offline tools, as bin/kvlog dispatches them (serve is apiserver/main.ts; every other command is
 * the client CLI's, clients/cli/main.ts). They work on a data directory no server has open, or talk to a
 * server as a client would, and the server never imports them (as etcd keeps etcdutl apart from etcd):
 *
 *   kvlog snapshot restore FILE --data-dir DIR [--to-revision REV | --to-time TIME] [-o table|json]
 *       writes a fresh data directory from a snapshot file (restore.ts), or one that ends at REV or TIME
 *       (restore-to.ts)
 *   kvlog import --from-etcd ENDPOINTS --data-dir DIR [-o table|json]              writes a fresh data
 *       directory from a running etcd, with etcd's revisions (apiserver/etcd-follow/import-etcd.ts, which
 *       serve --follow-etcd also runs)
 *   kvlog import status|cutover [--endpoint URL]   a following server's lag; its cutover (follow-command.ts)
 *   kvlog import --from-etcd-snapshot FILE --data-dir DIR [-o table|json]          the same from an etcd
 *       snapshot file (import-etcd-snapshot.ts)
 *   kvlog export --etcd-snapshot FILE --data-dir DIR [-o table|json]               writes a stopped
 *       server's store as an etcd snapshot file (export-etcd-snapshot.ts)
 *
 * Exit codes as the client CLI's: 0 ok, 1 error, 2 usage, 3 COMPACTED. Messages start with
 * `kvlog <command>: ` and a stable code. The terminal helpers (progress bar, sizes) come from the caller,
 * so the tools draw like the client CLI without importing it.
 */
import { basename } from 'node:path'
import { UsageError } from '../config/args.js'
import { isKvlogError } from '../log/index.js'
import { usePrivateUmask } from '../apiserver/file-modes.js'
import { exportCommand } from './export-etcd-snapshot.js'
import { runFollowCommand } from './follow-command.js'
import { importEtcdSnapshot } from './import-etcd-snapshot.js'
import { importFromEtcd } from '../apiserver/etcd-follow/import-etcd.js'
import { parseOfflineArgs, tableOrJson, type OfflineArgs, type Terminal } from './offline-args.js'
import { restoreFile } from './restore.js'
import { restoreToRevision, type RestorePoint } from './restore-to.js'

const RESTORE_USAGE = 'snapshot restore FILE --data-dir DIR'
const RESTORE_HELP = `Usage: kvlog ${RESTORE_USAGE} [--to-revision REV | --to-time TIME] [-o table|json]

Offline: writes a fresh data directory (missing or empty) from a snapshot file made by "kvlog snapshot
save", checking its sha256 trailer; on any failure what was written is removed again.

Flags:
  --data-dir DIR       the new data directory (missing or empty)
  --to-revision REV    a store that ends at REV: the history after it is dropped, the state is the
                       snapshot's state at REV, and new writes continue at REV + 1 (recovering from a bad
                       change). Below the snapshot's compact revision: COMPACTED; above its revision:
                       FUTURE_REVISION (exit 1)
  --to-time TIME       the same at the last revision committed at or before TIME (RFC 3339, e.g.
                       2026-11-22T21:00:00Z)
  -o, --output FORMAT  table (default) or json

Examples:
  kvlog snapshot restore backup.snap --data-dir /var/lib/kvlog
  kvlog snapshot restore backup.snap --data-dir ./before --to-revision 41200
  kvlog snapshot restore backup.snap --data-dir ./before --to-time 2026-11-22T14:02:00Z -o json`

const IMPORT_USAGE = 'import --from-etcd ENDPOINTS --data-dir DIR | import --from-etcd-snapshot FILE --data-dir DIR'
const IMPORT_HELP = `Usage: kvlog ${IMPORT_USAGE} [--cacert FILE] [--cert FILE --key FILE] [--user NAME:PASSWORD] [-o table|json]
       kvlog import --from-etcd-snapshot FILE --data-dir DIR [-o table|json]
       kvlog import status|cutover [--endpoint URL] [--timeout MS] [-o table|json]

Offline: writes a fresh data directory (missing or empty) from a running etcd (v3 gRPC; ENDPOINTS is a
comma-separated list of host:port, the first that answers is used), keeping etcd's revisions: every key's
create and mod revision and version, the history since etcd's compact revision, the compact revision
itself, and the leases with their remaining TTLs. The store is written beside DIR and moved into place
only when complete: on any failure nothing is left behind. Writes the source takes after the import
began are not copied. --cacert, --cert, --key and --user reach an etcd with TLS and auth as etcdctl's do
(an https:// endpoint means TLS too).

To keep following the etcd until a cutover, serve with --follow-etcd ENDPOINTS instead (it imports an empty
data dir first). "import status" shows such a server's lag; "import cutover" waits until it holds etcd's
current revision (stop etcd's writers first), stops following and opens writes (docs/operations.md).

With --from-etcd-snapshot (or --from-snapshot), the source is an etcd snapshot file ("etcdctl snapshot
save", or a member's member/snap/db): the same store, offline. Its sha256 trailer is checked; a damaged
file is refused with nothing written.`

export async function main(argv: string[], terminal: Terminal): Promise<number> {
  // Every file an offline tool creates (a restored store, an export) is the user's alone, as the server's.
  usePrivateUmask()
  const [name = '', ...rest] = argv
  try {
    if (name === 'snapshot' && rest[0] === 'restore') return await restore(rest.slice(1), terminal)
    if (name === 'import') return await importCommand(rest, terminal)
    if (name === 'export') return await exportCommand(parseOfflineArgs(rest, ['etcd-snapshot']), terminal)
    throw new UsageError(`not an offline command: ${argv.join(' ')}`)
  } catch (err) {
    // As the client CLI reports: a stable code before the message, exit 2 for usage and 3 for COMPACTED.
    const code = isKvlogError(err) || err instanceof UsageError ? `${err.code}: ` : ''
    process.stderr.write(`kvlog ${name}: ${code}${err instanceof Error ? err.message : String(err)}\n`)
    if (isKvlogError(err) && err.code === 'COMPACTED') return 3
    return err instanceof UsageError ? 2 : 1
  }
}

async function restore(argv: string[], terminal: Terminal): Promise<number> {
  const a = parseOfflineArgs(argv, ['to-revision', 'to-time'])
  if (a.help) {
    process.stdout.write(RESTORE_HELP + '\n')
    return 0
  }
  tableOrJson(a)
  if (a.positionals.length > 1) throw new UsageError(`unexpected argument ${a.positionals[1]}`)
  const file = a.positionals[0]
  if (file === undefined || file === '') throw new UsageError(`missing FILE: ${RESTORE_USAGE}`)
  if (a.dataDir === undefined || a.dataDir === '') throw new UsageError('snapshot restore needs --data-dir DIR (a new, empty directory)')
  const { dataDir } = a
  const point = restorePoint(a)
  const bar = (total: number) => terminal.progressBar(`restoring ${basename(file)}`, total)
  if (point !== undefined) {
    const r = await restoreToRevision(file, dataDir, point, bar)
    const line =
      a.output === 'json'
        ? JSON.stringify({ file, dataDir, ...r })
        : `restored ${file} into ${dataDir} up to revision ${r.revision}: ${r.keys} keys, compact revision ` +
          `${r.compactRevision}, revisions ${r.revision + 1}..${r.snapshotRevision} dropped, sha256 ${r.sha256}`
    process.stdout.write(line + '\n')
    return 0
  }
  const r = await restoreFile(file, dataDir, bar)
  const line =
    a.output === 'json'
      ? JSON.stringify({ file, dataDir, records: r.records, bytes: r.bytes, sha256: r.sha256 })
      : `restored ${file} into ${dataDir}: ${r.records} records, ${r.bytes} bytes (${terminal.size(r.bytes)}), sha256 ${r.sha256}`
  process.stdout.write(line + '\n')
  return 0
}

/** --to-revision REV or --to-time TIME (RFC 3339), at most one; undefined: the whole snapshot. */
function restorePoint(a: OfflineArgs): RestorePoint | undefined {
  if (a.toRevision !== undefined && a.toTime !== undefined) throw new UsageError('give --to-revision or --to-time, not both')
  if (a.toRevision !== undefined) {
    const revision = Number(a.toRevision)
    if (!/^[0-9]+$/.test(a.toRevision) || !Number.isSafeInteger(revision) || revision < 1)
      throw new UsageError(
        `--to-revision: expected a revision (1 or more), got ${JSON.stringify(a.toRevision)}`,
        'BAD_VALUE',
        '--to-revision',
      )
    return { revision }
  }
  if (a.toTime === undefined) return undefined
  const time = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T/.test(a.toTime) ? Date.parse(a.toTime) : NaN
  if (!Number.isFinite(time))
    throw new UsageError(
      `--to-time: expected an RFC 3339 time (2026-11-22T21:00:00Z), got ${JSON.stringify(a.toTime)}`,
      'BAD_VALUE',
      '--to-time',
    )
  return { time }
}

async function importCommand(argv: string[], terminal: Terminal): Promise<number> {
  if (argv.includes('--follow'))
    throw new UsageError('to keep following etcd after the import, serve: kvlog serve --follow-etcd ENDPOINTS --data-dir DIR')
  const a = parseOfflineArgs(argv, ['from-etcd', 'from-etcd-snapshot', 'from-snapshot', 'timeout', 'cacert', 'cert', 'key', 'user'])
  if (a.help) {
    process.stdout.write(IMPORT_HELP + '\n')
    return 0
  }
  tableOrJson(a)
  const verb = a.positionals[0]
  if (verb === 'status' || verb === 'cutover') {
    if (a.positionals.length > 1) throw new UsageError(`unexpected argument ${a.positionals[1]}`)
    const timeoutMs = a.timeout === undefined ? undefined : Number(a.timeout)
    if (timeoutMs !== undefined && !(Number.isSafeInteger(timeoutMs) && timeoutMs >= 0))
      throw new UsageError(`--timeout: milliseconds, got ${a.timeout}`, 'BAD_VALUE', '--timeout')
    const line = (l: string) => process.stdout.write(l + '\n')
    await runFollowCommand(
      { verb, output: tableOrJson(a), ...(a.endpoint ? { endpoint: a.endpoint } : {}), ...(timeoutMs !== undefined ? { timeoutMs } : {}) },
      line,
    )
    return 0
  }
  if (a.timeout !== undefined) throw new UsageError('--timeout goes with import cutover')
  if (a.positionals.length > 0) throw new UsageError(`unexpected argument ${a.positionals[0]}`)
  const snapshotFile = a.flags['from-etcd-snapshot'] ?? a.flags['from-snapshot']
  if (snapshotFile !== undefined) return await importSnapshotCommand(snapshotFile, a, terminal)
  if (a.fromEtcd === undefined || a.fromEtcd === '') throw new UsageError(`import needs --from-etcd ENDPOINTS: ${IMPORT_USAGE}`)
  if (a.dataDir === undefined || a.dataDir === '') throw new UsageError('import needs --data-dir DIR (a new, empty directory)')
  const { cacert, cert, key, user } = a.access
  const r = await importFromEtcd(a.fromEtcd, a.dataDir, {
    access: { caFile: cacert, certFile: cert, keyFile: key, user },
    progress: (total) => terminal.rateBar('importing history', total, 'revisions'),
    note: (line) => process.stderr.write(`kvlog import: ${line}\n`),
  })
  const line =
    a.output === 'json'
      ? JSON.stringify(r)
      : `imported ${r.endpoint} into ${r.dataDir}: revision ${r.revision}, compact revision ${r.compactRevision}, ` +
        `${r.keys} keys at the floor, ${r.revisions} revisions of history, ${r.leases} leases` +
        (r.restarts > 0 ? ` (started over ${r.restarts} time(s): the source compacted meanwhile)` : '')
  process.stdout.write(line + '\n')
  return 0
}

async function importSnapshotCommand(file: string, a: OfflineArgs, terminal: Terminal): Promise<number> {
  if (a.fromEtcd !== undefined) throw new UsageError('--from-etcd and --from-etcd-snapshot are two sources: give one')
  if (file === '') throw new UsageError('--from-etcd-snapshot needs a FILE')
  if (a.dataDir === undefined || a.dataDir === '') throw new UsageError('import needs --data-dir DIR (a new, empty directory)')
  const r = await importEtcdSnapshot(file, a.dataDir, {
    progress: (total) => terminal.rateBar(`importing ${basename(file)}`, total, 'entries'),
    note: (line) => process.stderr.write(`kvlog import: ${line}\n`),
  })
  const line =
    a.output === 'json'
      ? JSON.stringify(r)
      : `imported ${file} into ${r.dataDir}: revision ${r.revision}, compact revision ${r.compactRevision}, ` +
        `${r.keys} keys at the floor, ${r.revisions} revisions of history, ${r.leases} leases`
  process.stdout.write(line + '\n')
  return 0
}
