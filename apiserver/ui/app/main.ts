/**
 * The history browser's shell: the header (views, the head revision, live state), keyboard shortcuts
 * (1–5 switch views, / focuses the prefix search), the status poll (every 2 s) and the live watch shared
 * by the views, started once logged in when auth is on (login.ts). The latest writes are the history's
 * newest on open, then the live ones (recent.ts). Built with Preact and htm as plain ES modules, charts
 * with uPlot.
 */
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, type HistoryEvent, type Status } from './api.js'
import { html } from './common.js'
import { KeyHistoryView, RevisionView } from './history.js'
import { KeysView } from './keys.js'
import { LiveWatch, type LiveState } from './live.js'
import { LoginForm, SessionControl } from './login.js'
import { loadLatest, mergeRecent } from './recent.js'
import { href, revParam, useRoute, type View } from './route.js'
import { onSession, session as currentSession } from './session.js'
import { StatusView } from './status.js'
import { TimelineView } from './timeline.js'

const NAV: Array<[View, string]> = [
  ['timeline', 'Timeline'],
  ['keys', 'Keys'],
  ['key', 'Key history'],
  ['revision', 'Revision'],
  ['status', 'Status'],
]

/** Whether auth is on (asked once), the session, and whether the last one ended by a refused token. */
function useSession() {
  const [authOn, setAuthOn] = useState<boolean | undefined>()
  const [session, setSession] = useState(currentSession)
  const [expired, setExpired] = useState(false)
  useEffect(() => {
    void api.authStatus().then(
      (s) => setAuthOn(s.enabled),
      () => setAuthOn(true),
    )
    return onSession((s, gone) => {
      setSession(s)
      setExpired(gone)
      if (gone) setAuthOn(true)
    })
  }, [])
  return { authOn, session, expired }
}

function App() {
  const route = useRoute()
  const { authOn, session, expired } = useSession()
  const ready = authOn === false || (authOn === true && session !== undefined)
  const [status, setStatus] = useState<Status | undefined>()
  const [live, setLive] = useState<LiveState>({ connected: false, revision: 0 })
  const [recent, setRecent] = useState<HistoryEvent[]>([])
  const [recentError, setRecentError] = useState<Error | undefined>()
  useEffect(() => {
    if (!ready) return
    let stop = false
    const poll = async () => {
      if (stop) return
      await api.status().then(setStatus, () => undefined)
      setTimeout(poll, 2000)
    }
    void poll()
    setRecent([])
    setRecentError(undefined)
    const w = new LiveWatch((events) => setRecent((r) => mergeRecent(events.slice().reverse(), r)), setLive)
    loadLatest().then(
      (events) => !stop && setRecent((r) => mergeRecent(r, events)),
      (err: Error) => !stop && setRecentError(err),
    )
    return () => {
      stop = true
      w.close()
    }
  }, [ready, session?.token])
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
    if (authOn === undefined) return html`<p class="muted">Loading…</p>`
    if (!ready) return html`<${LoginForm} expired=${expired} />`
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
        return html`<${TimelineView} route=${route} head=${head} recent=${recent} recentError=${recentError} status=${status} />`
    }
  })()
  return html`<header>
      <h1>kvlog history</h1>
      <nav aria-label="Views">
        ${NAV.map(([v, label], i) => html`<a href=${href(v, { rev })} aria-current=${route.view === v ? 'page' : undefined} title=${`${label} (${i + 1})`}>${label}</a>`)}
      </nav>
      <span class="head"
        >head <strong data-testid="head">${head ?? '…'}</strong> · floor ${status?.compactRevision ?? '…'} ·
        ${
          live.connected
            ? html`<span class="live" data-testid="live">live</span>`
            : html`<span class="muted" data-testid="live" data-code=${live.refused}
                >${live.refused ? 'not live: may not watch every key' : live.gap ? 'resumed after a gap' : 'reconnecting…'}</span
              >`
        }</span
      >
      <${SessionControl} session=${session} />
    </header>
    <main>${view}</main>`
}

const root = document.getElementById('app')!
root.textContent = '' // the static "Loading…" placeholder
render(html`<${App} />`, root)
