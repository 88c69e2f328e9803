/**
 * The comparison as one SVG chart: a row per workload, a bar for kvlog's advantage over etcd on a log
 * scale around 1× (right and green = kvlog better, left and red = worse), whatever the unit: for
 * lower-is-better figures the advantage is etcd / kvlog.
 */
import { ratio, verdict, type Figure } from './figures.js'

const ROW = 22
const LABEL = 370
const HALF = 220
const MAX_DECADES = 2

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

export function advantage(f: Figure): number {
  const r = ratio(f)
  return f.higherIsBetter ? r : 1 / r
}

export function chart(figures: Figure[], title: string): string {
  const width = LABEL + 2 * HALF + 90
  const top = 56
  const height = top + figures.length * ROW + 40
  const center = LABEL + HALF
  const x = (adv: number) => {
    const decades = Math.max(-MAX_DECADES, Math.min(MAX_DECADES, Math.log10(adv)))
    return center + (decades / MAX_DECADES) * HALF
  }
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" font-size="15" font-weight="bold">${escape(title)}</text>`,
    `<text x="10" y="38" fill="#555">kvlog's advantage over etcd per workload (log scale): right/green = kvlog better, left/red = etcd better</text>`,
  ]
  for (const tick of [0.01, 0.1, 0.5, 1, 2, 10, 100]) {
    const tx = x(tick)
    out.push(`<line x1="${tx}" y1="${top - 6}" x2="${tx}" y2="${height - 30}" stroke="${tick === 1 ? '#333' : '#ddd'}"/>`)
    out.push(`<text x="${tx}" y="${height - 16}" text-anchor="middle" fill="#555">${tick}×</text>`)
  }
  figures.forEach((f, i) => {
    const y = top + i * ROW
    const adv = advantage(f)
    const bx = x(adv)
    const color = verdict(f) === 'against' ? '#d0453a' : '#2e9d4f'
    out.push(`<text x="${LABEL - 8}" y="${y + 14}" text-anchor="end">${escape(f.name)}</text>`)
    out.push(
      `<rect x="${Math.min(bx, center)}" y="${y + 3}" width="${Math.max(1, Math.abs(bx - center))}" height="${ROW - 6}" fill="${color}"/>`,
    )
    const label = Number.isFinite(adv) ? `${adv >= 10 ? adv.toFixed(0) : adv.toFixed(2)}×` : 'n/a'
    out.push(`<text x="${Math.max(bx, center) + 4}" y="${y + 14}" fill="#333">${label}</text>`)
  })
  out.push('</svg>')
  return out.join('\n') + '\n'
}
