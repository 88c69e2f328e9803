/** compact, status, cursor. */
import { UsageError } from '../args.js'
import { int, type Context } from '../context.js'
import { table } from '../output.js'

/** compact REV | --keep N */
export async function compact(c: Context): Promise<number> {
  const keep = int(c, 'keep')
  const [rev] = c.p.args
  if ((rev === undefined) === (keep === undefined)) throw new UsageError('compact takes a revision or --keep N (not both)')
  if (rev !== undefined && !/^[0-9]+$/.test(rev)) throw new UsageError(`not a revision: ${JSON.stringify(rev)}`)
  let target: number
  if (rev !== undefined) target = Number(rev)
  else {
    const s = await c.client.status()
    target = (s.revision as number) - keep!
    if (target <= (s.compactRevision as number)) {
      c.out(c.mode === 'json' ? JSON.stringify({ compactRevision: s.compactRevision, removedRevisions: 0 }) : `nothing to compact: fewer than ${keep} revisions above the floor`)
      return 0
    }
  }
  const r = await c.client.compact(target)
  if (c.mode === 'json') c.out(JSON.stringify(r))
  else c.out(`compacted to revision ${String(r.compactRevision)}: removed ${String(r.removedRevisions)} revisions in ${String(r.durationMs)} ms`)
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
  c.out(table([
    ['revision', String(s.revision)],
    ['compact revision', String(s.compactRevision)],
    ['db size', `${s.dbSize} bytes`],
    ['segments', String((s.segments as unknown[]).length)],
    ['watchers', `${watch.watchers} (${watch.slowWatchers} slow)`],
    ['compactions', `${compaction.runs}${compaction.last ? ` (last ${compaction.last.at})` : ''}`],
    ['alarms', (s.alarms as string[]).join(', ') || 'none'],
  ]))
  const segments = s.segments as Array<Record<string, number>>
  if (segments.length > 0) {
    c.out('')
    c.out(table([['SEGMENT', 'FIRST', 'LAST', 'ENTRIES', 'BYTES', 'FROM', 'TO'],
      ...segments.map((g) => [g.id, g.firstRevision, g.lastRevision, g.entries, g.bytes].map(String)
        .concat([new Date(g.firstTimestamp).toISOString(), new Date(g.lastTimestamp).toISOString()]))]))
  }
  const cursors = s.cursors as Array<{ name: string; revision: number; lag: number; expired: boolean }>
  if (cursors.length > 0) {
    c.out('')
    c.out(table([['CURSOR', 'REVISION', 'LAG', 'EXPIRED'], ...cursors.map((x) => [x.name, String(x.revision), String(x.lag), String(x.expired)])]))
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
      else c.out(table([['NAME', 'REVISION', 'LAG', 'EXPIRED'], ...list.map((x) => [x.name, String(x.revision), String(x.lag), String(x.expired)])]))
      return 0
    }
    case 'commit': {
      if (name === undefined || rev === undefined || !/^[0-9]+$/.test(rev)) throw new UsageError('cursor commit NAME REVISION')
      const x = await c.client.commitCursor(name, Number(rev))
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
      throw new UsageError('cursor list | commit NAME REVISION | delete NAME')
  }
}
