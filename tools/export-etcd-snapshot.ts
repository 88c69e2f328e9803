/** kvlog export --etcd-snapshot: a stopped server's store written as an etcd snapshot file. */
import { open, readdir, rename } from 'node:fs/promises'
import { basename } from 'node:path'
import { UsageError } from '../config/args.js'
import { openLog } from '../log/index.js'
import { explainOpenFailure } from '../apiserver/data-dir-lock.js'
import { PRIVATE_FILE_MODE } from '../apiserver/file-modes.js'
import { exportEtcdSnapshot } from '../apiserver/etcd-snapshot/export.js'
import { tableOrJson, type OfflineArgs, type Terminal } from './offline-args.js'

const EXPORT_USAGE = 'export --etcd-snapshot FILE --data-dir DIR'
const EXPORT_HELP = `Usage: kvlog ${EXPORT_USAGE} [-o table|json]

Offline: writes the store in DIR (its server stopped) as an etcd 3.4 snapshot file, with every revision
since the compact revision, the compact revision and the leases. "etcdctl snapshot restore FILE" turns it
into an etcd data directory serving the same keys, values and revisions. From a running server (or any
member of a cluster), "etcdctl snapshot save FILE" against its etcd port writes the same file.`

export async function exportCommand(a: OfflineArgs, terminal: Terminal): Promise<number> {
  if (a.help) {
    process.stdout.write(EXPORT_HELP + '\n')
    return 0
  }
  tableOrJson(a)
  if (a.positionals.length > 0) throw new UsageError(`unexpected argument ${a.positionals[0]}`)
  const file = a.flags['etcd-snapshot']
  if (file === undefined || file === '') throw new UsageError(`export needs --etcd-snapshot FILE: ${EXPORT_USAGE}`)
  if (a.dataDir === undefined || a.dataDir === '') throw new UsageError("export needs --data-dir DIR (a stopped server's data directory)")
  const dataDir = a.dataDir
  if ((await readdir(dataDir).catch(() => [])).length === 0) throw new UsageError(`${dataDir} holds no kvlog store`)
  // leaseCheckInterval 0: the export does not revoke leases that expired while the server was stopped
  // (they go out with a remaining TTL of 1 s, and etcd expires them as kvlog would have).
  const log = await openLog({ dir: dataDir, leaseCheckInterval: 0 }).catch(async (err: unknown) => {
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
