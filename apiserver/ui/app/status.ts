/**
 * Status: segments, database size, watchers and slow watchers, compaction runs, consumer cursors with
 * their lag, alarms (GET /v1/status), and small charts of the key metrics sampled every 2 s while the
 * view is open (revisions per second, watchers, database size).
 */
import { useEffect, useMemo, useState } from 'preact/hooks'
import type uPlot from 'uplot'
import type { Status } from './api.js'
import { Chart, wholeNumbers, X_AXIS, yAxis } from './chart.js'
import { fmtBytes, fmtTime, html } from './common.js'
import { href } from './route.js'

interface Sample {
  t: number
  revision: number
  watchers: number
  dbSize: number
}

/** How much time the status charts show, in seconds: the samples taken since the view opened, up to this. */
const WINDOW_S = 120

function small(label: string, color: string, format?: (v: number) => string): Omit<uPlot.Options, 'width'> {
  return {
    height: 140,
    legend: { show: false },
    // A fixed window ending just after the newest sample (so its point shows): one sample alone would
    // otherwise span years.
    scales: { x: { time: true, range: (_u, _min, max) => [max - WINDOW_S, max + 4] } },
    axes: [
      { ...X_AXIS, values: (_u, splits) => splits.map((s) => new Date(s * 1000).toISOString().slice(11, 19)) },
      yAxis(undefined, format),
    ],
    series: [{}, { label, stroke: color, width: 2, points: { show: true, size: 4 } }],
  }
}

export function StatusView({ status }: { status: Status | undefined }) {
  const [samples, setSamples] = useState<Sample[]>([])
  useEffect(() => {
    if (status)
      setSamples((s) => [
        ...s.slice(-59),
        { t: Date.now() / 1000, revision: status.revision, watchers: status.watch.watchers, dbSize: status.dbSize },
      ])
  }, [status])
  const opts = useMemo(
    () => ({
      rate: small('revisions/s', '#0b62c4'),
      watchers: small('watchers', '#8250df', wholeNumbers),
      db: small('db size', '#b35900', fmtBytes),
    }),
    [],
  )
  if (!status) return html`<p class="loading">Loading…</p>`
  const t = samples.map((s) => s.t)
  const rate = samples.map((s, i) => (i === 0 ? 0 : (s.revision - samples[i - 1].revision) / Math.max(0.001, s.t - samples[i - 1].t)))
  const c = status.compaction
  return html`<div>
    <div class="charts">
      <div style="flex:1 1 260px">
        <h2>Revisions/s</h2>
        <${Chart} opts=${opts.rate} data=${[t, rate]} label="revisions per second" />
      </div>
      <div style="flex:1 1 260px">
        <h2>Watchers</h2>
        <${Chart} opts=${opts.watchers} data=${[t, samples.map((s) => s.watchers)]} label="watchers" />
      </div>
      <div style="flex:1 1 260px">
        <h2>Database size</h2>
        <${Chart} opts=${opts.db} data=${[t, samples.map((s) => s.dbSize)]} label="database size" />
      </div>
    </div>
    <section class="panel scroll">
      <table data-testid="status-summary">
        <tbody>
          <tr>
            <th>Revision</th>
            <td>${status.revision}</td>
            <th>Compact revision (floor)</th>
            <td>${status.compactRevision}</td>
          </tr>
          <tr>
            <th>Database size</th>
            <td>${fmtBytes(status.dbSize)}</td>
            <th>Alarms</th>
            <td>${status.alarms.length ? status.alarms.join(', ') : 'none'}</td>
          </tr>
          <tr>
            <th>Watchers</th>
            <td>${status.watch.watchers}</td>
            <th>Slow watchers</th>
            <td>${status.watch.slowWatchers}</td>
          </tr>
          <tr>
            <th>Compaction runs</th>
            <td>${c.runs}</td>
            <th>Removed revisions</th>
            <td>${c.removedRevisionsTotal} (${fmtBytes(c.bytesFreedTotal)} freed)</td>
          </tr>
          ${
            c.inProgress
              ? html`<tr>
                  <th>Compacting to</th>
                  <td>${c.inProgress.target}</td>
                  <th>Progress</th>
                  <td>${Math.round(c.inProgress.progress * 100)}%</td>
                </tr>`
              : ''
          }
        </tbody>
      </table>
    </section>
    <section class="panel scroll">
      <h2>Cursors</h2>
      <table>
        <thead>
          <tr>
            <th>Name</th>
            <th>Revision</th>
            <th>Lag</th>
            <th>Updated</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          ${
            status.cursors.length === 0
              ? html`<tr>
                  <td colspan="5" class="muted">none</td>
                </tr>`
              : ''
          }
          ${status.cursors.map(
            (x) =>
              html`<tr>
                <td>${x.name}</td>
                <td><a href=${href('revision', { rev: x.revision })}>${x.revision}</a></td>
                <td>${x.lag}</td>
                <td>${fmtTime(x.updatedAt)}</td>
                <td>${x.expired ? 'expired' : ''}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </section>
    <section class="panel scroll">
      <h2>Segments</h2>
      <table>
        <thead>
          <tr>
            <th>Id</th>
            <th>Revisions</th>
            <th>From</th>
            <th>To</th>
            <th>Entries</th>
            <th>Bytes</th>
          </tr>
        </thead>
        <tbody>
          ${status.segments.map(
            (s) =>
              html`<tr>
                <td>${s.id}</td>
                <td>${s.firstRevision}–${s.lastRevision}</td>
                <td>${fmtTime(s.firstTimestamp)}</td>
                <td>${fmtTime(s.lastTimestamp)}</td>
                <td>${s.entries}</td>
                <td>${fmtBytes(s.bytes)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </section>
  </div>`
}
