/**
 * The history browser's shell: the header (views, the head revision, live state), keyboard shortcuts
 * (1–5 switch views, / focuses the prefix search), the status poll (every 2 s) and the live watch shared
 * by the views. Built with Preact and htm as plain ES modules, charts with uPlot.
 */
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, type HistoryEvent, type Status } from './api.js'
import { html } from './common.js'
import { KeyHistoryView, RevisionView } from './history.js'
import { KeysView } from './keys.js'
import { LiveWatch, type LiveState } from './live.js'
import { href, revParam, useRoute, type View } from './route.js'
import { StatusView } from './status.js'
import { TimelineView } from './timeline.js'

const NAV: Array<[View, string]> = [
  ['timeline', 'Timeline'],
  ['keys', 'Keys'],
  ['key', 'Key history'],
  ['revision', 'Revision'],
  ['status', 'Status'],
]

function App() {
  const route = useRoute()
  const [status, setStatus] = useState<Status | undefined>()
  const [live, setLive] = useState<LiveState>({ connected: false, revision: 0 })
  const [recent, setRecent] = useState<HistoryEvent[]>([])
  useEffect(() => {
    let stop = false
    const poll = async () => {
      if (stop) return
      await api.status().then(setStatus, () => undefined)
      setTimeout(poll, 2000)
    }
    void poll()
    const w = new LiveWatch((events) => setRecent((r) => [...events.slice().reverse(), ...r].slice(0, 50)), setLive)
    return () => {
      stop = true
      w.close()
    }
  }, [])
  useEffect(() => {
    const on = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement
      if (t.closest('input, textarea') || e.ctrlKey || e.metaKey || e.altKey) return
      const n = Number(e.key)
      if (n >= 1 && n <= NAV.length) location.hash = href(NAV[n - 1][0], { rev: revParam(route.params) })
      else if (e.key === '/') {
        e.preventDefault()
        if (route.view !== 'keys') location.hash = href('keys', { rev: revParam(route.params) })
        setTimeout(() => document.getElementById('prefix-search')?.focus(), 0)
      }
    }
    addEventListener('keydown', on)
    return () => removeEventListener('keydown', on)
  }, [route])
  const head = Math.max(status?.revision ?? 0, live.revision) || undefined
  const rev = revParam(route.params)
  const view = (() => {
    switch (route.view) {
      case 'keys':
        return html`<${KeysView} route=${route} head=${head} />`
      case 'key':
        return html`<${KeyHistoryView} route=${route} head=${head} compactRevision=${status?.compactRevision} />`
      case 'revision':
        return html`<${RevisionView} route=${route} head=${head} />`
      case 'status':
        return html`<${StatusView} status=${status} />`
      default:
        return html`<${TimelineView} route=${route} head=${head} recent=${recent} status=${status} />`
    }
  })()
  return html`<header>
      <h1>kvlog history</h1>
      <nav aria-label="Views">
        ${NAV.map(([v, label], i) => html`<a href=${href(v, { rev })} aria-current=${route.view === v ? 'page' : undefined} title=${`${label} (${i + 1})`}>${label}</a>`)}
      </nav>
      <span class="head"
        >head <strong data-testid="head">${head ?? '…'}</strong> · floor ${status?.compactRevision ?? '…'} ·
        ${live.connected ? html`<span class="live" data-testid="live">live</span>` : html`<span class="muted" data-testid="live">${live.gap ? 'resumed after a gap' : 'reconnecting…'}</span>`}</span
      >
    </header>
    <main>${view}</main>`
}

const root = document.getElementById('app')!
root.textContent = '' // the static "Loading…" placeholder
render(html`<${App} />`, root)
