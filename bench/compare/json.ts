/**
 * bench:compare's JSON line and its verdict on the run. A measurement that failed (nothing measured: NaN,
 * a division by zero: Infinity, or no positive value where the figure measures a positive quantity; a growth
 * may be 0) is
 * `null` in the JSON (JSON has no NaN) and is named in `failed`; the script exits 1 when `failed` is not
 * empty, so a missing figure never reads as zero.
 */
import { ratio, ratioSpread, type Figure } from './figures.js'

/** A number for JSON: four significant digits, or null for a failed measurement. */
export function jsonNumber(x: number): number | null {
  return Number.isFinite(x) ? Number(x.toPrecision(4)) : null
}

const measured = (x: number, f: Figure) => Number.isFinite(x) && (x > 0 || (f.zeroMeasures === true && x === 0))

/**
 * The names of the figures with a side (or a run of a side) that measured nothing. etcd's median is the
 * ratio's denominator: it must be positive even where 0 is a measurement.
 */
export function failedFigures(figures: Figure[]): string[] {
  return figures
    .filter(
      (f) =>
        !measured(f.kvlog, f) || !(f.etcd > 0 && Number.isFinite(f.etcd)) || [...f.runs.kvlog, ...f.runs.etcd].some((x) => !measured(x, f)),
    )
    .map((f) => f.name)
}

export interface RunInfo {
  /** ISO date and time the run started. */
  date: string
  etcdVersion: string
  quick: boolean
  /** Runs per side of each figure. */
  rounds: number
}

export function jsonLine(figures: Figure[], info: RunInfo): string {
  const workloads: Record<string, object> = {}
  for (const f of figures) {
    workloads[f.name] = {
      kvlog: jsonNumber(f.kvlog),
      etcd: jsonNumber(f.etcd),
      unit: f.unit,
      higherIsBetter: f.higherIsBetter,
      ratio: jsonNumber(ratio(f)),
      ratioSpread: ratioSpread(f).map(jsonNumber),
      runs: { kvlog: f.runs.kvlog.map(jsonNumber), etcd: f.runs.etcd.map(jsonNumber) },
      ...(f.pass ? { pass: f.pass } : {}),
    }
  }
  return JSON.stringify({ ...info, workloads, failed: failedFigures(figures) })
}
