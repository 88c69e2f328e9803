/**
 * `npm run test:cluster-faults -- [--runs N] [--cells kill:stream-leader,stop:kvlog-leader] [-o json]`:
 * runs each cell of the fault matrix (matrix.ts) N times and prints, per cell, the median and largest
 * longest-gap, the bound it is held to, and whether any run lost an acknowledged write, forked, or did
 * not have exactly one member publishing as leader after a lease (with the fence rejections seen). Exits
 * 1 if any run broke a rule or its bound.
 */
import { cellName, runCell, TARGETS, type Cell, type RunResult, type Signal } from './matrix.js'

function parseArgs(argv: string[]): { runs: number; cells: Cell[]; json: boolean } {
  let runs = 1
  let json = false
  let cells: Cell[] = (['kill', 'stop'] as Signal[]).flatMap((signal) => TARGETS.map((target) => ({ signal, target })))
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--runs') runs = Number(argv[++i])
    else if (a === '-o' && argv[i + 1] === 'json') {
      json = true
      i++
    } else if (a === '--cells') {
      const wanted = argv[++i].split(',')
      cells = cells.filter((c) => wanted.includes(cellName(c)))
      if (cells.length !== wanted.length) throw new Error(`unknown cell in ${argv[i]}; cells are <kill|stop>:<${TARGETS.join('|')}>`)
    } else throw new Error(`unknown argument ${a}`)
  }
  if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs takes a positive integer')
  return { runs, cells, json }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor((s.length - 1) / 2)]
}

/** A run within its rules: its gap within its bound, one leader, nothing lost, one digest. */
export function held(r: RunResult): boolean {
  return r.gapMs <= r.boundMs && r.oneLeader && r.lost === 0 && r.sameDigest && r.stopped.length === 0
}

/**
 * One run; a run whose cluster did not start (a member not ready in time on a loaded machine) says so
 * and is run again, up to twice: it measured no fault.
 */
async function startedRun(cell: Cell): Promise<RunResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runCell(cell)
    } catch (err) {
      if (attempt === 3 || !/did not start/.test(String(err))) throw err
      process.stderr.write(`${cellName(cell)}: the cluster did not start (${String(err).split('\n')[0]}); running again\n`)
    }
  }
}

async function main(): Promise<void> {
  const { runs, cells, json } = parseArgs(process.argv.slice(2))
  const results: RunResult[] = []
  for (const cell of cells) {
    for (let i = 0; i < runs; i++) {
      const r = await startedRun(cell)
      results.push(r)
      if (!json) process.stderr.write(`${r.cell} run ${i + 1}: ${JSON.stringify(r)}\n`)
    }
  }
  if (json) process.stdout.write(JSON.stringify(results, null, 2) + '\n')
  else {
    const rows = cells.map((c) => {
      const rs = results.filter((r) => r.cell === cellName(c))
      const gaps = rs.map((r) => r.gapMs)
      const elections = rs.map((r) => r.electionMs)
      const metaElections = rs.map((r) => r.metaElectionMs)
      return [
        cellName(c),
        String(rs.length),
        String(median(gaps)),
        String(Math.max(...gaps)),
        String(Math.max(...elections)),
        String(Math.max(...metaElections)),
        `${Math.max(...rs.map((r) => r.leaderlessMs.log))} / ${Math.max(...rs.map((r) => r.leaderlessMs.bucket))}`,
        String(Math.max(...rs.map((r) => r.boundMs))),
        String(rs.reduce((n, r) => n + r.lost, 0)),
        rs.every((r) => r.sameDigest) ? 'yes' : 'NO',
        String(rs.filter((r) => r.stopped.length > 0).length),
        rs.every((r) => r.oneLeader) ? 'yes' : 'NO',
        String(rs.reduce((n, r) => n + r.fenceRejections, 0)),
        `${rs.reduce((n, r) => n + r.natsDisconnects, 0)} (${rs.reduce((n, r) => n + r.onVictim, 0)})`,
        rs.every(held) ? 'ok' : 'BROKEN',
      ]
    })
    const header = [
      'cell',
      'runs',
      'gap median ms',
      'gap max ms',
      'election max ms',
      'meta election max ms',
      'log stream / bucket without a leader, max ms',
      'bound ms',
      'lost',
      'same digest',
      'runs with a member stopped',
      'one leader publishing',
      'fence rejections',
      'NATS disconnects (members on the victim)',
      'verdict',
    ]
    for (const row of [header, ...rows]) process.stdout.write(`| ${row.join(' | ')} |\n`)
  }
  process.exitCode = results.every(held) ? 0 : 1
}

await main()
