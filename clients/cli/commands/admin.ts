/** compact, status, cursor. */
import { createInterface } from 'node:readline/promises'
import { UsageError } from '../args.js'
import { bool, int, type Context } from '../context.js'
import { table } from '../output.js'
import { parsePoint, stateRevision } from '../points.js'
import { size } from '../progress.js'

/**
 * compact REV|TIME | --keep N [--force]. Compacting past a live consumer cursor expires it (its consumer
 * must relist): then kvlog names the cursors and asks on a terminal, and refuses (exit 1) without one,
 * unless --force.
 */
export async function compact(c: Context): Promise<number> {
  const keep = int(c, 'keep')
  const [rev] = c.p.args
  if ((rev === undefined) === (keep === undefined)) throw new UsageError('compact takes a revision (or time) or --keep N (not both)')
  let target: number
  if (rev !== undefined) target = await stateRevision(c.client, parsePoint(rev, 'REV'))
  else {
    const s = await c.client.status()
    target = (s.revision as number) - keep!
    if (target <= (s.compactRevision as number)) {
      c.out(
        c.mode === 'json'
          ? JSON.stringify({ compactRevision: s.compactRevision, removedRevisions: 0 })
          : `nothing to compact: fewer than ${keep} revisions above the floor`,
      )
      return 0
    }
  }
  const doomed = (await c.client.cursors()).filter((x) => !x.expired && x.revision + 1 < target)
  if (doomed.length > 0 && !bool(c, 'force')) {
    const names = doomed.map((x) => `${x.name} (at revision ${x.revision})`).join(', ')
    const question = `compacting to revision ${target} would expire ${doomed.length} consumer cursor(s): ${names}; their consumers would have to relist`
    if (!(await confirm(`${question}. Compact anyway? [y/N] `))) {
      throw new Error(`${question}. Nothing was compacted; run again with --force to compact anyway`)
    }
  }
  const r = await c.client.compact(target)
  if (c.mode === 'json') c.out(JSON.stringify(r))
  else
    c.out(
      `compacted to revision ${String(r.compactRevision)}: removed ${String(r.removedRevisions)} revisions in ${String(r.durationMs)} ms`,
    )
  return 0
}

export async function status(c: Context): Promise<number> {
  const s = await c.client.status()
  if (c.mode === 'json') {
    c.out(JSON.stringify(s))
    return 0
  }
  const watch = s.watch as { watchers: number; slowWatchers: number }
  const compaction = s.compaction as { runs: number; last?: { at: string } }
  c.out(
    table([
      ['revision', String(s.revision)],
      ['compact revision', String(s.compactRevision)],
      ['db size', size(s.dbSize as number)],
      ['segments', String((s.segments as unknown[]).length)],
      ['watchers', `${watch.watchers} (${watch.slowWatchers} slow)`],
      ['compactions', `${compaction.runs}${compaction.last ? ` (last ${compaction.last.at})` : ''}`],
      ['alarms', (s.alarms as string[]).join(', ') || 'none'],
    ]),
  )
  const segments = s.segments as Array<Record<string, number>>
  if (segments.length > 0) {
    c.out('')
    c.out(
      table([
        ['SEGMENT', 'FIRST', 'LAST', 'ENTRIES', 'BYTES', 'FROM', 'TO'],
        ...segments.map((g) =>
          [g.id, g.firstRevision, g.lastRevision, g.entries]
            .map(String)
            .concat([size(g.bytes), new Date(g.firstTimestamp).toISOString(), new Date(g.lastTimestamp).toISOString()]),
        ),
      ]),
    )
  }
  const cursors = s.cursors as Array<{ name: string; revision: number; lag: number; expired: boolean }>
  if (cursors.length > 0) {
    c.out('')
    c.out(
      table([
        ['CURSOR', 'REVISION', 'LAG', 'EXPIRED'],
        ...cursors.map((x) => [x.name, String(x.revision), String(x.lag), String(x.expired)]),
      ]),
    )
  }
  return 0
}

/** cursor list | commit NAME REV | delete NAME */
export async function cursor(c: Context): Promise<number> {
  const [verb, name, rev] = c.p.args
  switch (verb) {
    case 'list': {
      const list = await c.client.cursors()
      if (c.mode === 'json') c.out(JSON.stringify(list))
      else
        c.out(
          table([
            ['NAME', 'REVISION', 'LAG', 'EXPIRED'],
            ...list.map((x) => [x.name, String(x.revision), String(x.lag), String(x.expired)]),
          ]),
        )
      return 0
    }
    case 'commit': {
      if (name === undefined || rev === undefined) throw new UsageError('cursor commit NAME REV|TIME')
      const x = await c.client.commitCursor(name, await stateRevision(c.client, parsePoint(rev, 'REV')))
      c.out(c.mode === 'json' ? JSON.stringify(x) : `cursor ${x.name} at revision ${x.revision} (lag ${x.lag})`)
      return 0
    }
    case 'delete': {
      if (name === undefined) throw new UsageError('cursor delete NAME')
      await c.client.deleteCursor(name)
      c.out(c.mode === 'json' ? JSON.stringify({ deleted: name }) : `deleted cursor ${name}`)
      return 0
    }
    default:
      throw new UsageError('cursor list | commit NAME REV|TIME | delete NAME')
  }
}

/** Asks a yes/no question on the terminal; false (no question asked) when stdin or stderr is not one. */
async function confirm(question: string): Promise<boolean> {
  if (process.stdin.isTTY !== true || process.stderr.isTTY !== true) return false
  const rl = createInterface({ input: process.stdin, output: process.stderr })
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim())
  } finally {
    rl.close()
  }
}
