/**
 * A uPlot chart as a Preact component. The chart is created once per `opts` identity and fed new data
 * with setData, and resized to its container's width (so it stays readable at phone width).
 */
import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import { html } from './common.js'

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
