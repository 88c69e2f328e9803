/**
 * Where a kvlog cluster write's time goes, for bench:cluster: each member's `kvlog_cluster_phase_seconds`
 * histogram (log/jetstream/metrics.ts, PHASES) scraped from /metrics before and after a load, the
 * difference summed over rounds, and per phase the count, mean and p50/p99 (interpolated within buckets)
 * over all members and, for the phases every member goes through (delivery, apply), per member.
 */

/** One member's histogram: per phase the cumulative count per upper bound (seconds), the sum and count. */
export type PhaseHistograms = Map<string, { buckets: Map<number, number>; sum: number; count: number }>

export interface PhaseSummary {
  count: number
  meanMs: number
  p50Ms: number
  p99Ms: number
}

const LINE = /^kvlog_cluster_phase_seconds_(bucket|sum|count)\{([^}]*)\} (\S+)$/

/** Parses the phase histogram out of a /metrics text. */
export function parsePhases(text: string): PhaseHistograms {
  const out: PhaseHistograms = new Map()
  for (const line of text.split('\n')) {
    const m = LINE.exec(line)
    if (m === null) continue
    const labels = new Map([...m[2].matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]))
    const phase = labels.get('phase')
    if (phase === undefined) continue
    const h = out.get(phase) ?? { buckets: new Map(), sum: 0, count: 0 }
    out.set(phase, h)
    const value = Number(m[3])
    if (m[1] === 'sum') h.sum = value
    else if (m[1] === 'count') h.count = value
    else h.buckets.set(labels.get('le') === '+Inf' ? Infinity : Number(labels.get('le')), value)
  }
  return out
}

/** Every member's phase histograms now (a member that does not answer counts as empty). */
export async function scrapePhases(httpUrls: readonly string[]): Promise<PhaseHistograms[]> {
  return Promise.all(
    httpUrls.map(async (url) => {
      try {
        const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) })
        return parsePhases(await res.text())
      } catch {
        return new Map() as PhaseHistograms
      }
    }),
  )
}

/** `total` += after − before, member by member. */
export function addDifference(total: PhaseHistograms[], before: PhaseHistograms[], after: PhaseHistograms[]): void {
  after.forEach((a, i) => {
    total[i] ??= new Map()
    for (const [phase, h] of a) {
      const b = before[i]?.get(phase)
      const t = total[i].get(phase) ?? { buckets: new Map(), sum: 0, count: 0 }
      total[i].set(phase, t)
      t.sum += h.sum - (b?.sum ?? 0)
      t.count += h.count - (b?.count ?? 0)
      for (const [le, n] of h.buckets) t.buckets.set(le, (t.buckets.get(le) ?? 0) + n - (b?.buckets.get(le) ?? 0))
    }
  })
}

/** One phase over the given members' histograms: count, mean and quantiles (linear within a bucket). */
export function summarize(members: readonly PhaseHistograms[], phase: string): PhaseSummary | undefined {
  const buckets = new Map<number, number>()
  let sum = 0
  let count = 0
  for (const m of members) {
    const h = m.get(phase)
    if (h === undefined) continue
    sum += h.sum
    count += h.count
    for (const [le, n] of h.buckets) buckets.set(le, (buckets.get(le) ?? 0) + n)
  }
  if (count === 0) return undefined
  const bounds = [...buckets.entries()].sort((a, b) => a[0] - b[0])
  const quantile = (q: number) => {
    const rank = q * count
    let lower = 0
    let below = 0
    for (const [le, cumulative] of bounds) {
      if (cumulative >= rank) {
        // Past the last finite bound: the last bound is all that is known.
        if (le === Infinity) return lower * 1000
        const inBucket = cumulative - below
        return (lower + (inBucket === 0 ? 0 : ((rank - below) / inBucket) * (le - lower))) * 1000
      }
      lower = le
      below = cumulative
    }
    return lower * 1000
  }
  return { count, meanMs: (sum / count) * 1000, p50Ms: quantile(0.5), p99Ms: quantile(0.99) }
}
