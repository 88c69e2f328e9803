/**
 * Shared plumbing for the benchmark scripts: statistics, progress on a terminal, a table for people and
 * one JSON line for machines (`--json`). Their command lines are options.ts's.
 */

/** The p-th percentile (0..100) of unsorted samples, nearest-rank. */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return 0
  const sorted = Float64Array.from(samples).sort()
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank]
}

export function median(values: number[]): number {
  return percentile(values, 50)
}

/** Writes a one-line progress note on a terminal (stderr), nothing otherwise. */
export function progress(text: string): void {
  if (process.stderr.isTTY) process.stderr.write(`\r\x1b[2K${text}`)
}

export function endProgress(): void {
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[2K')
}

export function formatNumber(n: number): string {
  if (Number.isInteger(n) || Math.abs(n) >= 100) return Math.round(n).toLocaleString('en-US')
  return n.toFixed(2)
}

/** A plain text table: first row is the header. */
export function table(rows: Array<Array<string | number>>): string {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'number' ? formatNumber(c) : c)))
  const widths = cells[0].map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)))
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')
  return [line(cells[0]), widths.map((w) => '─'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n')
}

/**
 * Runs a benchmark's main: an error is printed and sets exit code 1; `cleanup` runs in any case; a child
 * process left behind cannot keep the script alive past a second after.
 */
export async function runBench(main: () => Promise<void>, cleanup: () => void): Promise<void> {
  try {
    await main()
  } catch (err) {
    endProgress()
    console.error(err)
    process.exitCode = 1
  } finally {
    cleanup()
  }
  setTimeout(() => process.exit(), 1000).unref()
}
