/**
 * The server's commands, as bin/kvlog dispatches them (every other command is the client CLI's,
 * clients/cli/main.ts):
 *
 *   kvlog serve [--config FILE] [--data-dir DIR] [--listen-http HOST:PORT] ...   every config setting is a
 *       flag (docs/configuration.md); SIGTERM or SIGINT drains and exits 0; SIGHUP reloads the TLS files
 *   kvlog snapshot restore FILE --data-dir DIR [--to-revision REV | --to-time TIME] [-o table|json]
 *       offline: writes a fresh data directory from a snapshot file (restore.ts), or one that ends at REV or
 *       TIME (restore-to.ts)
 *   kvlog import --from-etcd ENDPOINTS --data-dir DIR [-o table|json]              offline: writes a fresh
 *       data directory from a running etcd, with etcd's revisions (import/import-etcd.ts)
 *   kvlog import status|cutover [--endpoint URL]   a following server's lag; its cutover (import/follow-command.ts)
 *   kvlog import --from-etcd-snapshot FILE --data-dir DIR [-o table|json]          the same from an etcd
 *       snapshot file (etcd-snapshot/import.ts)
 *   kvlog export --etcd-snapshot FILE --data-dir DIR [-o table|json]               offline: writes a
 *       stopped server's store as an etcd snapshot file (etcd-snapshot/export.ts)
 *
 * Exit codes as the client CLI's: 0 ok, 1 error, 2 usage (a bad setting included), 3 COMPACTED. Messages start with
 * `kvlog <command>: `. The terminal helpers (progress bar, sizes) come from the caller, so this side of the
 * house draws like the client CLI without importing it.
 */
import { open, readdir, readFile, rename } from 'node:fs/promises'
import { basename } from 'node:path'
import { ConfigError, loadConfig, SETTINGS } from '../config/index.js'
import { isKvlogError } from '../log/index.js'
import { formatDefault } from '../config/print-docs.js'
import { explainOpenFailure } from './data-dir-lock.js'
import { exposureMessage, exposures } from './exposure-warnings.js'
import { looseKeyFiles, narrowDataDir, PRIVATE_FILE_MODE, usePrivateUmask } from './file-modes.js'
import { startServer } from './server.js'
import { restoreFile, type Progress } from './restore.js'
import { restoreToRevision, type RestorePoint } from './restore-to.js'
import { importFromEtcd } from './import/import-etcd.js'
import { runFollowCommand } from './import/follow-command.js'
import { importEtcdSnapshot } from './etcd-snapshot/import.js'
import { exportEtcdSnapshot } from './etcd-snapshot/export.js'
import { openLevelLog } from '../log/index.js'

export interface Terminal {
  progressBar(label: string, total: number): Progress
  /** Progress in counted units with a rate and an ETA (e.g. revisions). */
  rateBar(label: string, total: number, unit: string): Progress
  size(bytes: number): string
}

class UsageError extends Error {
  override readonly name = 'UsageError'
}

/** `kvlog serve --help`: every setting as a flag with its description and default, from the config schema. */
function serveHelp(): string {
  const rows = SETTINGS.map((x) => [
    `${x.flag} ${x.type === 'boolean' ? 'true|false' : x.type === 'enum' ? (x.values ?? []).join('|') : x.type.toUpperCase()}`,
    `${x.description} (default ${formatDefault(x)}; env ${x.env})`,
  ])
  const width = Math.min(48, Math.max(...rows.map(([f]) => f.length)))
  return `Usage: kvlog serve [flags]

Runs the server. Defaults: data in ./kvlog-data, HTTP on 127.0.0.1:8379, etcd gRPC on 127.0.0.1:2379.
Every setting can come from a config file (--config FILE, JSON or YAML), a KVLOG_* environment variable
or a flag (flags win); docs/configuration.md lists them too. SIGTERM or SIGINT drains and exits 0.
SIGHUP reads the TLS certificate, key and CA files again (new connections get them).

Flags:
  --config FILE${' '.repeat(Math.max(2, width - 11))}a JSON or YAML file of settings (keys as below, e.g. dataDir)
${rows.map(([f, d]) => `  ${f.padEnd(width)}  ${d}`).join('\n')}

Examples:
  kvlog serve
  kvlog serve --data-dir /var/lib/kvlog --listen-http 0.0.0.0:8379 --listen-grpc 0.0.0.0:2379
  kvlog serve --config /etc/kvlog/kvlog.yaml --log-format text
  npm start -- --data-dir ./data`
}

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

const EXPORT_USAGE = 'export --etcd-snapshot FILE --data-dir DIR'
const EXPORT_HELP = `Usage: kvlog ${EXPORT_USAGE} [-o table|json]

Offline: writes the store in DIR (its server stopped) as an etcd 3.4 snapshot file, with every revision
since the compact revision, the compact revision and the leases. "etcdctl snapshot restore FILE" turns it
into an etcd data directory serving the same keys, values and revisions. From a running server (or any
member of a cluster), "etcdctl snapshot save FILE" against its etcd port writes the same file.`

export async function main(argv: string[], terminal: Terminal): Promise<number> {
  // Every file a server command creates is the server user's alone (file-modes.ts).
  usePrivateUmask()
  const [name = '', ...rest] = argv
  try {
    if (name === 'serve') {
      if (rest.includes('--help') || rest.includes('-h')) {
        process.stdout.write(serveHelp() + '\n')
        return 0
      }
      return await serve(rest)
    }
    if (name === 'snapshot' && rest[0] === 'restore') return await restore(rest.slice(1), terminal)
    if (name === 'import') return await importCommand(rest, terminal)
    if (name === 'export') return await exportCommand(rest, terminal)
    throw new UsageError(`not a server command: ${argv.join(' ')}`)
  } catch (err) {
    // As the client CLI reports: a stable code before the message, and exit 3 for COMPACTED.
    const code = isKvlogError(err) ? `${err.code}: ` : ''
    process.stderr.write(`kvlog ${name}: ${code}${err instanceof Error ? err.message : String(err)}\n`)
    if (isKvlogError(err) && err.code === 'COMPACTED') return 3
    return err instanceof UsageError || err instanceof ConfigError ? 2 : 1
  }
}

async function serve(argv: string[]): Promise<number> {
  const { config, args } = loadConfig({ argv, env: process.env })
  if (args.length > 0) throw new UsageError(`serve takes no arguments, got ${args.join(' ')}`)
  const widerMode = await narrowDataDir(config.dataDir)
  const server = await startServer(config).catch(async (err: unknown) => {
    throw await explainOpenFailure(err, config.dataDir)
  })
  const { logger } = server
  if (widerMode !== undefined)
    logger.warn(
      { dataDir: config.dataDir, was: `0${widerMode.toString(8)}`, now: '0700' },
      'data directory was readable by others; narrowed to 0700',
    )
  for (const k of await looseKeyFiles(config))
    logger.warn({ setting: k.setting, file: k.file, mode: k.mode }, 'private key file is readable by group or others; chmod 600 it')
  for (const e of exposures(config, server.authEnabled()))
    logger.warn({ listener: e.listener, address: e.address, without: e.without }, exposureMessage(e))
  logger.info(
    { http: server.http, grpc: server.grpc, dataDir: config.dataDir, pid: process.pid, version: await version() },
    'kvlog serving',
  )
  const reload = () => void server.reloadTls()
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      logger.info({ signal }, 'kvlog stopping')
      const timer = setTimeout(() => {
        logger.error({ shutdownTimeout: config.shutdownTimeout }, 'kvlog did not stop in time; exiting')
        process.exit(1)
      }, config.shutdownTimeout)
      timer.unref()
      void server.close().then(resolve)
    }
    process.once('SIGTERM', stop)
    process.once('SIGINT', stop)
    process.on('SIGHUP', reload)
  })
  process.off('SIGHUP', reload)
  logger.info({ http: server.http, grpc: server.grpc }, 'kvlog stopped')
  return 0
}

interface OfflineArgs {
  positionals: string[]
  dataDir?: string
  fromEtcd?: string
  toRevision?: string
  toTime?: string
  /** Towards the source etcd, as etcdctl's flags. */
  access: { cacert?: string; cert?: string; key?: string; user?: string }
  timeout?: string
  /** The server to ask (import status/cutover); the other offline commands ignore it. */
  endpoint?: string
  /** The other `extra` flags, by name. */
  flags: Record<string, string>
  output: string
  help: boolean
}

/**
 * The offline commands' flags (--data-dir, -o/--output, and `extra`), as the client CLI parses flags
 * (--flag value or --flag=value). --endpoint is accepted everywhere (KVLOG_ENDPOINT habits); only import
 * status/cutover use it.
 */
function parseOfflineArgs(argv: string[], extra: readonly string[] = []): OfflineArgs {
  const parsed: OfflineArgs = { positionals: [], access: {}, flags: {}, output: 'table', help: false }
  const positionals = parsed.positionals
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (!a.startsWith('-') || a === '-') {
      positionals.push(a)
      continue
    }
    const body = a.replace(/^--?/, '')
    const eq = body.indexOf('=')
    const flag = eq >= 0 ? body.slice(0, eq) : body
    if (flag === 'help' || flag === 'h') {
      parsed.help = true
      continue
    }
    if (flag !== 'data-dir' && flag !== 'output' && flag !== 'o' && flag !== 'endpoint' && !extra.includes(flag))
      throw new UsageError(`unknown flag ${a.split('=')[0]}`)
    let value = eq >= 0 ? body.slice(eq + 1) : undefined
    if (value === undefined) {
      if (i + 1 >= argv.length) throw new UsageError(`${a} needs a value`)
      value = argv[++i]
    }
    if (flag === 'data-dir') parsed.dataDir = value
    else if (flag === 'from-etcd') parsed.fromEtcd = value
    else if (flag === 'to-revision') parsed.toRevision = value
    else if (flag === 'to-time') parsed.toTime = value
    else if (flag === 'timeout') parsed.timeout = value
    else if (flag === 'cacert' || flag === 'cert' || flag === 'key' || flag === 'user') parsed.access[flag] = value
    else if (flag === 'endpoint') parsed.endpoint = value
    else if (extra.includes(flag)) parsed.flags[flag] = value
    else parsed.output = value
  }
  return parsed
}

async function restore(argv: string[], terminal: Terminal): Promise<number> {
  const a = parseOfflineArgs(argv, ['to-revision', 'to-time'])
  if (a.help) {
    process.stdout.write(RESTORE_HELP + '\n')
    return 0
  }
  if (a.output !== 'table' && a.output !== 'json') throw new UsageError(`-o: expected table or json, got ${a.output}`)
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
      throw new UsageError(`--to-revision: expected a revision (1 or more), got ${JSON.stringify(a.toRevision)}`)
    return { revision }
  }
  if (a.toTime === undefined) return undefined
  const time = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T/.test(a.toTime) ? Date.parse(a.toTime) : NaN
  if (!Number.isFinite(time))
    throw new UsageError(`--to-time: expected an RFC 3339 time (2026-11-22T21:00:00Z), got ${JSON.stringify(a.toTime)}`)
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
  if (a.output !== 'table' && a.output !== 'json') throw new UsageError(`-o: expected table or json, got ${a.output}`)
  const verb = a.positionals[0]
  if (verb === 'status' || verb === 'cutover') {
    if (a.positionals.length > 1) throw new UsageError(`unexpected argument ${a.positionals[1]}`)
    const timeoutMs = a.timeout === undefined ? undefined : Number(a.timeout)
    if (timeoutMs !== undefined && !(Number.isSafeInteger(timeoutMs) && timeoutMs >= 0))
      throw new UsageError(`--timeout: milliseconds, got ${a.timeout}`)
    const line = (l: string) => process.stdout.write(l + '\n')
    await runFollowCommand(
      { verb, output: a.output, ...(a.endpoint ? { endpoint: a.endpoint } : {}), ...(timeoutMs !== undefined ? { timeoutMs } : {}) },
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

async function exportCommand(argv: string[], terminal: Terminal): Promise<number> {
  const a = parseOfflineArgs(argv, ['etcd-snapshot'])
  if (a.help) {
    process.stdout.write(EXPORT_HELP + '\n')
    return 0
  }
  if (a.output !== 'table' && a.output !== 'json') throw new UsageError(`-o: expected table or json, got ${a.output}`)
  if (a.positionals.length > 0) throw new UsageError(`unexpected argument ${a.positionals[0]}`)
  const file = a.flags['etcd-snapshot']
  if (file === undefined || file === '') throw new UsageError(`export needs --etcd-snapshot FILE: ${EXPORT_USAGE}`)
  if (a.dataDir === undefined || a.dataDir === '') throw new UsageError("export needs --data-dir DIR (a stopped server's data directory)")
  const dataDir = a.dataDir
  if ((await readdir(dataDir).catch(() => [])).length === 0) throw new UsageError(`${dataDir} holds no kvlog store`)
  // leaseCheckInterval 0: the export does not revoke leases that expired while the server was stopped
  // (they go out with a remaining TTL of 1 s, and etcd expires them as kvlog would have).
  const log = await openLevelLog({ dir: dataDir, leaseCheckInterval: 0 }).catch(async (err: unknown) => {
    throw await explainOpenFailure(err, dataDir)
  })
  try {
    const snap = await exportEtcdSnapshot(log)
    const bar = terminal.progressBar(`writing ${basename(file)}`, snap.size)
    const part = `${file}.part`
    const out = await open(part, 'w', PRIVATE_FILE_MODE)
    try {
      await out.chmod(PRIVATE_FILE_MODE)
      let written = 0
      for (const p of snap.parts) {
        await out.write(p)
        bar.update((written += p.length))
      }
      await out.sync()
    } finally {
      await out.close()
    }
    await rename(part, file)
    bar.done()
    const line =
      a.output === 'json'
        ? JSON.stringify({
            file,
            dataDir,
            revision: snap.revision,
            compactRevision: snap.compactRevision,
            entries: snap.keyEntries,
            leases: snap.leases,
            bytes: snap.size,
            sha256: snap.sha256,
          })
        : `exported ${dataDir} to ${file}: revision ${snap.revision}, compact revision ${snap.compactRevision}, ` +
          `${snap.keyEntries} key revisions, ${snap.leases} leases, ${terminal.size(snap.size)}`
    process.stdout.write(line + '\n')
    return 0
  } finally {
    await log.close()
  }
}

async function version(): Promise<string> {
  const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  return pkg.version
}
