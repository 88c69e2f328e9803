/**
 * Timeline: revisions (write transactions) per time bucket over the retained history
 * (GET /v1/history/buckets), with the compaction floor, the consumer cursors and now marked. A click picks
 * the revision current at that time; dragging zooms to a time range (URL: #/timeline?from=T&to=T&rev=R;
 * `from` and `to` may be revisions too, timeline-range.ts).
 * The latest writes are the history's newest, then the live ones over the WebSocket watch (live.ts); the
 * buckets refresh.
 */
import { useEffect, useMemo, useState } from 'preact/hooks'
import type uPlot from 'uplot'
import { api, authorText, text, type HistoryEvent, type Status } from './api.js'
import { Chart, wholeNumbers, X_AXIS, yAxis } from './chart.js'
import { fmtTime, html, Problem, RevisionPicker, useAsync } from './common.js'
import { href, revParam, type Route } from './route.js'
import { resolveRange } from './timeline-range.js'

interface Marks {
  floor?: number
  now: number
  cursors: Array<{ name: string; at: number }>
  picked?: number
}

/** The time (s) at which revision `rev` was current, from the bucket holding it. */
function timeOf(rev: number, starts: number[], firsts: number[], bucketMs: number): number | undefined {
  for (let i = firsts.length - 1; i >= 0; i--) if (firsts[i] <= rev) return starts[i] + bucketMs / 2000
  return undefined
}

export function TimelineView({
  route,
  head,
  recent,
  recentError,
  status,
}: {
  route: Route
  head: number | undefined
  recent: HistoryEvent[]
  recentError: Error | undefined
  status: Status | undefined
}) {
  const rev = revParam(route.params)
  const from = route.params.get('from') ?? undefined
  const to = route.params.get('to') ?? undefined
  const [tick, setTick] = useState(0)
  useEffect(() => {
    const t = setInterval(() => setTick((n) => n + 1), 5000)
    return () => clearInterval(t)
  }, [])
  // The range is resolved once per URL (revisions to their commit times), the buckets on every refresh.
  const range = useMemo(() => {
    const p = resolveRange(from, to)
    p.catch(() => undefined) // awaited by the buckets' load after the render, which shows the error
    return p
  }, [from, to])
  const buckets = useAsync(async () => {
    const r = await range
    return { ...(await api.buckets(120, r.fromTime, r.toTime)), range: r }
  }, [range, tick])
  const b = buckets.data
  const series = useMemo(() => {
    if (!b) return undefined
    const starts = b.buckets.map((x) => Date.parse(x.start) / 1000)
    return { starts, firsts: b.buckets.map((x) => x.firstRevision), counts: b.buckets.map((x) => x.revisions) }
  }, [b])
  const marks: Marks = useMemo(() => {
    const m: Marks = { now: Date.now() / 1000, cursors: [] }
    if (series && b) {
      const floorRev = b.header.compactRevision
      if (floorRev > 0) m.floor = timeOf(floorRev, series.starts, series.firsts, b.bucketMs)
      for (const c of status?.cursors ?? []) {
        const at = timeOf(c.revision, series.starts, series.firsts, b.bucketMs)
        if (at !== undefined) m.cursors.push({ name: c.name, at })
      }
      if (rev !== undefined) m.picked = timeOf(rev, series.starts, series.firsts, b.bucketMs)
    }
    return m
  }, [series, status, rev])
  const opts = useMemo(
    (): Omit<uPlot.Options, 'width'> => ({
      height: 220,
      legend: { show: false },
      cursor: { drag: { x: true, y: false, setScale: false } },
      scales: { x: { time: true } },
      axes: [X_AXIS, yAxis('revisions', wholeNumbers)],
      series: [{}, { label: 'revisions', stroke: '#0b62c4', fill: 'rgba(11,98,196,0.25)', paths: undefined, points: { show: false } }],
      hooks: {
        draw: [
          (u: uPlot) => {
            const ctx = u.ctx
            const line = (t: number | undefined, color: string, label: string) => {
              if (t === undefined) return
              const x = u.valToPos(t, 'x', true)
              if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return
              ctx.save()
              ctx.strokeStyle = color
              ctx.fillStyle = color
              ctx.lineWidth = 2 * devicePixelRatio
              ctx.beginPath()
              ctx.moveTo(x, u.bbox.top)
              ctx.lineTo(x, u.bbox.top + u.bbox.height)
              ctx.stroke()
              ctx.font = `${11 * devicePixelRatio}px sans-serif`
              // uPlot leaves the y axis' right alignment set: the label would run back over the axis.
              ctx.textAlign = 'left'
              ctx.textBaseline = 'alphabetic'
              ctx.fillText(label, x + 3 * devicePixelRatio, u.bbox.top + 12 * devicePixelRatio)
              ctx.restore()
            }
            const m = (u as unknown as { marks?: Marks }).marks
            if (!m) return
            line(m.floor, '#b35900', 'floor')
            for (const c of m.cursors) line(c.at, '#8250df', c.name)
            line(m.picked, '#1a7f37', 'picked')
            line(m.now, '#cf222e', 'now')
          },
        ],
        setSelect: [
          (u: uPlot) => {
            if (u.select.width < 5) return
            const a = u.posToVal(u.select.left, 'x')
            const z = u.posToVal(u.select.left + u.select.width, 'x')
            location.hash = href('timeline', { from: new Date(a * 1000).toISOString(), to: new Date(z * 1000).toISOString(), rev })
          },
        ],
      },
    }),
    [],
  )
  const [chart, setChart] = useState<uPlot | undefined>()
  useEffect(() => {
    if (!chart) return
    ;(chart as unknown as { marks?: Marks }).marks = marks
    chart.redraw(false)
  }, [chart, marks])
  const pickAt = async (seconds: number) => {
    const r = await api.revisionAt(new Date(seconds * 1000).toISOString()).catch((err: Error) => err)
    if (r instanceof Error) return setPickError(r)
    setPickError(undefined)
    location.hash = href('timeline', { from, to, rev: r.revision })
  }
  const [pickError, setPickError] = useState<Error | undefined>()
  const onReady = (u: uPlot) => {
    setChart(u)
    u.over.addEventListener('click', () => {
      if (u.select.width >= 5 || u.cursor.left === undefined || u.cursor.left < 0) return
      void pickAt(u.posToVal(u.cursor.left, 'x'))
    })
  }
  const data = series ? ([series.starts, series.counts] as uPlot.AlignedData) : ([[], []] as uPlot.AlignedData)
  return html`<div>
    <${RevisionPicker} rev=${rev} head=${head} />
    <section class="panel" aria-label="Writes over time">
      <h2>
        Writes per ${b ? `${Math.max(1, Math.round(b.bucketMs / 1000))} s` : ''} bucket
        ${
          b?.range.fromRevision !== undefined || b?.range.toRevision !== undefined
            ? html`<span data-testid="range-revisions">revisions ${b.range.fromRevision ?? 'floor'}–${b.range.toRevision ?? 'head'}</span>`
            : ''
        }
        ${from || to ? html`<a href=${href('timeline', { rev })}>(whole history)</a>` : ''}
      </h2>
      ${buckets.error ? html`<${Problem} error=${buckets.error} />` : ''}
      <${Chart} opts=${opts} data=${data} label="Revisions committed per time bucket" onReady=${onReady} />
      <p class="muted">
        Click to pick the revision current at a time; drag to zoom. Floor ${b?.header.compactRevision ?? '…'}, head ${head ?? '…'}.
      </p>
      ${pickError ? html`<${Problem} error=${pickError} />` : ''}
      ${rev !== undefined ? html`<p>Picked revision <strong>${rev}</strong>: <a href=${href('keys', { rev })}>keys at ${rev}</a> · <a href=${href('revision', { rev })}>what revision ${rev} changed</a></p>` : ''}
    </section>
    <section class="panel" aria-label="Latest writes">
      <h2>Latest writes <span class="live">(live)</span></h2>
      ${recentError ? html`<${Problem} error=${recentError} />` : ''}
      <ul class="plain" data-testid="recent">
        ${recent.length === 0 ? html`<li class="muted">No writes yet; new ones appear here as they are made.</li>` : ''}
        ${recent.map((e) => html`<li><a href=${href('revision', { rev: e.revision })}>${e.revision}</a> ${e.type} <a href=${href('key', { key: text(e.kv, 'key') })}>${text(e.kv, 'key')}</a> <span class="muted">${fmtTime(e.time)}</span>${authorText(e) ? html` <span class="muted" data-testid="recent-who">by ${authorText(e)}</span>` : ''}</li>`)}
      </ul>
    </section>
  </div>`
}
