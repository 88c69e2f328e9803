/**
 * A progress bar on stderr for long transfers (snapshot save / restore). Drawn only when stderr is a
 * terminal and CI is not set, so logs, pipes and CI stay clean; redrawn at most every 100 ms.
 */

export interface Progress {
  update(bytes: number): void
  /** Draws the final state and ends the line (no-op when not drawing). */
  done(): void
}

interface Terminal {
  isTTY?: boolean
  columns?: number
  write(text: string): unknown
}

const REDRAW_MS = 100

export function progressBar(
  label: string,
  total: number,
  stream: Terminal = process.stderr,
  env: NodeJS.ProcessEnv = process.env,
): Progress {
  // done() shows the real size: `total` was an estimate.
  return redrawn(stream, env, (bytes, width, done) => renderProgress(label, bytes, done ? bytes : total, width))
}

/**
 * A progress display in counted units (e.g. revisions of an import): `label [####....]  45%  4500 / 10000
 * revisions  850/s  ETA 7s`, on the same terms as progressBar (a terminal only, redrawn every 100 ms).
 */
export function rateBar(
  label: string,
  total: number,
  unit: string,
  stream: Terminal = process.stderr,
  env: NodeJS.ProcessEnv = process.env,
): Progress {
  const started = Date.now()
  return redrawn(stream, env, (count, width) => renderRate(label, count, total, unit, Date.now() - started, width))
}

/** A line redrawn in place at most every REDRAW_MS, on a terminal outside CI only (else nothing is drawn). */
function redrawn(stream: Terminal, env: NodeJS.ProcessEnv, render: (value: number, width: number, done: boolean) => string): Progress {
  if (stream.isTTY !== true || (env.CI !== undefined && env.CI !== '' && env.CI !== 'false'))
    return { update: () => undefined, done: () => undefined }
  let last = 0
  let value = 0
  const draw = (done: boolean) => stream.write(`\r${render(value, Math.max(20, (stream.columns ?? 80) - 1), done)}`)
  return {
    update(n) {
      value = n
      const now = Date.now()
      if (now - last < REDRAW_MS) return
      last = now
      draw(false)
    },
    done() {
      draw(true)
      stream.write('\n')
    },
  }
}

/** One line of rateBar: the bar, the count, the rate over `elapsedMs` and the time left at that rate. */
export function renderRate(label: string, count: number, total: number, unit: string, elapsedMs: number, width: number): string {
  const fraction = total > 0 ? Math.min(1, count / total) : 1
  const rate = elapsedMs > 0 ? (count * 1000) / elapsedMs : 0
  const eta = rate > 0 && count < total ? `  ETA ${Math.ceil((total - count) / rate)}s` : ''
  const figures = ` ${String(Math.floor(fraction * 100)).padStart(3)}%  ${count} / ${total} ${unit}  ${Math.round(rate)}/s${eta}`
  const room = width - label.length - figures.length - 3
  if (room < 5) return `${label}${figures}`.slice(0, width)
  const filled = Math.round(fraction * room)
  return `${label} [${'#'.repeat(filled)}${'.'.repeat(room - filled)}]${figures}`
}

/**
 * One line: `label [#####.....]  45%  12.3 MiB / 27.1 MiB`, at most `width` characters. `total` is an
 * estimate: past it the bar stays at 99% until done() sets it to the real size.
 */
export function renderProgress(label: string, bytes: number, total: number, width: number): string {
  const known = total > 0
  const fraction = !known ? 0 : bytes >= total ? (bytes === total ? 1 : 0.99) : bytes / total
  const figures = known
    ? ` ${String(Math.floor(fraction * 100)).padStart(3)}%  ${size(bytes)} / ${size(Math.max(total, bytes))}`
    : `  ${size(bytes)}`
  const room = width - label.length - figures.length - 3
  if (room < 5) return `${label}${figures}`.slice(0, width)
  const filled = Math.round(fraction * room)
  return `${label} [${'#'.repeat(filled)}${'.'.repeat(room - filled)}]${figures}`
}

export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let v = bytes / 1024
  let i = 0
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return `${v.toFixed(1)} ${units[i]}`
}
