/**
 * A key's history (#/key?key=K) and one revision (#/revision?rev=R). Each version shows its revision,
 * commit time, who wrote it (when the server says), and a diff against the version before: structural
 * for JSON, by lines otherwise. Deletes are marked; a delete of a key that had a lease is marked as a
 * lease delete (the lease was revoked or expired, or the key was deleted by hand while it had one).
 * The key's history is paged (100 events a page) from the compact revision on.
 */
import { useEffect, useState } from 'preact/hooks'
import { api, text, type HistoryEvent } from './api.js'
import { fmtTime, html, Problem, useAsync } from './common.js'
import { pretty, valueDiff } from './diff.js'
import { href, revParam, type Route } from './route.js'

function Diff({ e }: { e: HistoryEvent }) {
  if (e.type === 'DELETE') return html`<pre class="diff"><span class="del">${e.prevKv ? pretty(text(e.prevKv, 'value')) : '(deleted)'}</span></pre>`
  const after = text(e.kv, 'value')
  if (!e.prevKv) return html`<pre class="diff"><span class="add">${pretty(after)}</span></pre>`
  const d = valueDiff(text(e.prevKv, 'value'), after)
  if (d.rows.length === 0) return html`<p class="muted">(same value)</p>`
  return html`<pre class="diff" data-diff=${d.kind}>${d.rows.map((r) => html`<div class=${r.kind}>${r.kind === 'add' ? '+ ' : r.kind === 'del' ? '- ' : '  '}${r.text}</div>`)}</pre>`
}

function Version({ e, showKey }: { e: HistoryEvent; showKey: boolean }) {
  const who = e.author ?? e.who
  const leased = e.type === 'DELETE' && e.prevKv?.lease !== undefined
  const key = text(e.kv, 'key')
  return html`<article class="version" data-revision=${e.revision}>
    <div class="meta">
      <a href=${href('revision', { rev: e.revision })}>revision ${e.revision}</a>
      <span>${fmtTime(e.time)}</span>
      <span class=${`tag ${e.type}`}>${e.type === 'DELETE' ? 'deleted' : e.prevKv ? 'modified' : 'created'}</span>
      ${leased ? html`<span class="tag lease" title="the key had lease ${e.prevKv?.lease}">lease ${e.prevKv?.lease}</span>` : ''}
      ${who ? html`<span class="who">by ${who}</span>` : ''}
      ${showKey ? html`<a href=${href('key', { key })}>${key}</a>` : html`<span>version ${e.kv.version}</span>`}
    </div>
    <${Diff} e=${e} />
  </article>`
}

export function KeyHistoryView({ route }: { route: Route }) {
  const key = route.params.get('key') ?? ''
  const [events, setEvents] = useState<HistoryEvent[]>([])
  const [next, setNext] = useState<number | undefined>()
  const [floor, setFloor] = useState(0)
  const [error, setError] = useState<Error | undefined>()
  const page = async (from: number | undefined, reset: boolean) => {
    try {
      const r = await api.history(key, { from, limit: 100 })
      setFloor(r.header.compactRevision)
      setEvents((old) => (reset ? r.events : [...old, ...r.events]))
      setNext(r.more ? r.nextRevision : undefined)
    } catch (err) {
      setError(err as Error)
    }
  }
  useEffect(() => {
    setEvents([])
    setError(undefined)
    if (key) void page(undefined, true)
  }, [key])
  if (!key) return html`<p>Pick a key in <a href=${href('keys')}>Keys</a>.</p>`
  return html`<div>
    <h2>History of <span data-testid="history-key">${key}</span></h2>
    <p><a href=${href('keys', { prefix: key.slice(0, key.lastIndexOf('/') + 1), key, rev: revParam(route.params) })}>Show in Keys</a></p>
    ${floor > 1 ? html`<div class="notice" data-code="COMPACTED">History before revision ${floor} was compacted; it is available from revision ${floor} on.</div>` : ''}
    ${error ? html`<${Problem} error=${error} />` : ''}
    <div aria-label="Versions" data-testid="versions">${events.map((e) => html`<${Version} e=${e} showKey=${false} />`)}</div>
    ${events.length === 0 && !error ? html`<p class="muted">No versions in the retained history.</p>` : ''}
    ${next !== undefined ? html`<button onClick=${() => void page(next, false)}>Older… (from revision ${next})</button>` : ''}
  </div>`
}

export function RevisionView({ route, head }: { route: Route; head: number | undefined }) {
  const rev = revParam(route.params) ?? head
  const r = useAsync(() => (rev === undefined ? Promise.resolve(undefined) : api.history('', { all: true, from: rev, to: rev, limit: 1000 })), [rev])
  const goto = (n: number) => (location.hash = href('revision', { rev: n }))
  useEffect(() => {
    const on = (e: KeyboardEvent) => {
      if ((e.target as HTMLElement).closest('input') || rev === undefined) return
      if (e.key === '[' && rev > 1) goto(rev - 1)
      if (e.key === ']') goto(rev + 1)
    }
    addEventListener('keydown', on)
    return () => removeEventListener('keydown', on)
  }, [rev])
  if (rev === undefined) return html`<p class="loading">Loading…</p>`
  if (rev > (head ?? Infinity)) return html`<div class="notice" data-code="FUTURE_REVISION">Revision ${rev} has not been written yet (the head is ${head}).</div>`
  const events = r.data?.events ?? []
  return html`<div>
    <div class="pick">
      <button onClick=${() => goto(rev - 1)} disabled=${rev <= 1} aria-label="Previous revision">← ${rev - 1}</button>
      <h2 style="margin:0">Revision <span data-testid="revision">${rev}</span></h2>
      <button onClick=${() => goto(rev + 1)} disabled=${head !== undefined && rev >= head} aria-label="Next revision">${rev + 1} →</button>
      <span class="muted"><kbd>[</kbd> <kbd>]</kbd> to step</span>
      ${events[0] ? html`<span class="muted">${fmtTime(events[0].time)} · ${events.length} change(s)</span>` : ''}
    </div>
    ${r.error ? html`<${Problem} error=${r.error} />` : ''}
    ${r.data && events.length === 0 && rev <= 1 ? html`<p class="muted">Revision 1 is the empty store.</p>` : ''}
    ${r.data && events.length === 0 && rev > 1 ? html`<p class="muted">Nothing of this revision is left in the log (compaction keeps only what later reads need).</p>` : ''}
    <div data-testid="revision-events">${events.map((e) => html`<${Version} e=${e} showKey=${true} />`)}</div>
  </div>`
}
