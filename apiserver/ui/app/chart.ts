/**
 * A uPlot chart as a Preact component. The chart is created once per `opts` identity and fed new data
 * with setData, and resized to its container's width (so it stays readable at phone width). `yAxis` and
 * `X_AXIS` keep labels apart and inside the canvas: the y axis as wide as its longest label, ticks spaced
 * for the labels' size.
 */
import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import { html } from './common.js'

/** The width of a y axis: its longest tick label as drawn, plus the ticks and the gap. */
function fitSize(u: uPlot, values: string[] | undefined, axisIdx: number, cycleNum: number): number {
  const axis = u.axes[axisIdx] as uPlot.Axis & { _size?: number; font?: [string] }
  if (cycleNum > 1 && axis._size !== undefined) return axis._size
  const longest = (values ?? []).reduce((a, v) => (v.length > a.length ? v : a), '')
  u.ctx.save()
  u.ctx.font = axis.font?.[0] ?? '12px sans-serif'
  const text = u.ctx.measureText(longest).width / devicePixelRatio
  u.ctx.restore()
  return Math.ceil(text + (axis.ticks?.size ?? 10) + (axis.gap ?? 5) + 8)
}

/** A y axis sized to its labels, ticks at least 28 px apart, labels by `format` (default: the number). */
export function yAxis(label?: string, format?: (v: number) => string): uPlot.Axis {
  return {
    ...(label ? { label, labelSize: 20 } : {}),
    size: fitSize,
    space: 28,
    ...(format ? { values: (_u: uPlot, splits: number[]) => splits.map(format) } : {}),
  }
}

/** Tick labels for counts: whole numbers only (no "2.5 watchers"). */
export const wholeNumbers = (v: number): string => (Number.isInteger(v) ? String(v) : '')

/** A time x axis with ticks far enough apart that labels such as ":18.400" or "21:36:20" never touch. */
export const X_AXIS: uPlot.Axis = { space: 90, size: 44 }

export interface ChartProps {
  opts: Omit<uPlot.Options, 'width'>
  data: uPlot.AlignedData
  label: string
  onReady?: (u: uPlot) => void
}

export function Chart({ opts, data, label, onReady }: ChartProps) {
  const box = useRef<HTMLDivElement>(null)
  const plot = useRef<uPlot | undefined>(undefined)
  useEffect(() => {
    const el = box.current!
    const width = () => Math.max(240, el.clientWidth || 600)
    const u = new uPlot({ ...opts, width: width() } as uPlot.Options, data, el)
    plot.current = u
    onReady?.(u)
    const resize = new ResizeObserver(() => u.setSize({ width: width(), height: opts.height }))
    resize.observe(el)
    return () => {
      resize.disconnect()
      u.destroy()
      plot.current = undefined
    }
  }, [opts])
  useEffect(() => {
    plot.current?.setData(data)
  }, [data])
  return html`<div class="chart timeline-chart" ref=${box} role="img" aria-label=${label}></div>`
}
