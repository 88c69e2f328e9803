/**
 * revert (--to-revision REV | --to-time TIME) [--prefix P] [--dry-run]: puts a subtree (or every key)
 * back to its state at REV in one new transaction (POST /v1/revert). Revisions move forward and watchers
 * see ordinary events. --dry-run prints the same changes without writing.
 */
import type { RevertChange } from '../../client.js'
import { bool, prefixRange, str, type Context } from '../context.js'
import { bytesJson, display, jsonDiff, table } from '../output.js'
import { onePoint } from '../points.js'

export async function revert(c: Context): Promise<number> {
  const revision = await onePoint(c, 'to-revision', 'to-time')
  const { key, range } = prefixRange(str(c, 'prefix'))
  const dryRun = bool(c, 'dry-run')
  const r = await c.client.revert(key, { ...range, revision, dryRun })
  if (c.mode === 'json') {
    c.out(
      JSON.stringify({
        toRevision: revision,
        fromRevision: r.fromRevision,
        dryRun,
        ...(r.revision !== undefined ? { revision: r.revision } : {}),
        changes: r.changes.map((x) => ({
          change: x.change,
          ...bytesJson('key', x.key),
          ...bytesJson('value', x.value),
          ...bytesJson('previousValue', x.previousValue),
        })),
      }),
    )
    return 0
  }
  if (r.changes.length === 0) {
    c.out(`nothing to revert: the keys are as they were at revision ${revision}`)
    return 0
  }
  c.out(table([['CHANGE SINCE', 'KEY', 'REVERT'], ...r.changes.map((x) => [x.change, display(x.key), action(x)])]))
  c.out(
    dryRun
      ? `dry run: ${r.changes.length} key(s) would be written (planned against revision ${r.fromRevision})`
      : `reverted ${r.changes.length} key(s) to revision ${revision} at revision ${r.revision}`,
  )
  return 0
}

function action(x: RevertChange): string {
  if (x.value === undefined) return `delete (is ${display(x.previousValue ?? Buffer.alloc(0))})`
  if (x.previousValue === undefined) return `put back ${display(x.value)}`
  const d = jsonDiff(x.previousValue, x.value)
  return d === undefined ? `${display(x.previousValue)} → ${display(x.value)}` : d.join('; ')
}
