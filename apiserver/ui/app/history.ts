/**
 * A key's history (#/key?key=K) and one revision (#/revision?rev=R). Each version shows its revision,
 * commit time, who wrote it (the door and the user; the store itself for a lease expiry; nothing for
 * entries written before kvlog recorded authors), and a diff against the version before: structural
 * for JSON, by lines otherwise. Deletes are marked; a delete of a key that had a lease is marked as a
 * lease delete (the lease was revoked or expired, or the key was deleted by hand while it had one).
 * The key's history is shown newest first, read in windows of revisions (below).
 */
import { useEffect, useLayoutEffect, useState } from 'preact/hooks'
import { api, ApiError, authorText, text, type HistoryEvent } from './api.js'
import { fmtTime, html, Problem, useAsync } from './common.js'
import { pretty, valueDiff } from './diff.js'
import { href, revParam, type Route } from './route.js'

function Diff({ e }: { e: HistoryEvent }) {
  if (e.type === 'DELETE')
    return html`<pre class="diff"><span class="del">${e.prevKv ? pretty(text(e.prevKv, 'value')) : '(deleted)'}</span></pre>`
  const after = text(e.kv, 'value')
  if (!e.prevKv) return html`<pre class="diff"><span class="add">${pretty(after)}</span></pre>`
  const d = valueDiff(text(e.prevKv, 'value'), after)
  if (d.rows.length === 0) return html`<p class="muted">(same value)</p>`
  return html`<pre class="diff" data-diff=${d.kind}>
${d.rows.map((r) => html`<div class=${r.kind}>${r.kind === 'add' ? '+ ' : r.kind === 'del' ? '- ' : '  '}${r.text}</div>`)}</pre>`
}

function Version({ e, showKey }: { e: HistoryEvent; showKey: boolean }) {
  const who = authorText(e)
  const leased = e.type === 'DELETE' && e.prevKv?.lease !== undefined
  const key = text(e.kv, 'key')
  return html`<article class="version" data-revision=${e.revision}>
    <div class="meta">
      <a href=${href('revision', { rev: e.revision })}>revision ${e.revision}</a>
      <span>${fmtTime(e.time)}</span>
      <span class=${`tag ${e.type}`}>${e.type === 'DELETE' ? 'deleted' : e.prevKv ? 'modified' : 'created'}</span>
      ${leased ? html`<span class="tag lease" title="the key had lease ${e.prevKv?.lease}">lease ${e.prevKv?.lease}</span>` : ''}
      ${who ? html`<span class="who" data-testid="who" title="the door it came through, and the user (anonymous without auth)">by ${who}</span>` : ''}
      ${showKey ? html`<a href=${href('key', { key })}>${key}</a>` : html`<span>version ${e.kv.version}</span>`}
    </div>
    <${Diff} e=${e} />
  </article>`
}

/**
 * History is read from the log by revision (a scan), so a key's history is read in windows of
 * WINDOW revisions from the newest back: each costs a bounded scan however large the store is.
 */
const WINDOW = 20_000

export function KeyHistoryView({
  route,
  head,
  compactRevision,
}: {
  route: Route
  head: number | undefined
  compactRevision: number | undefined
}) {
  const key = route.params.get('key') ?? ''
  const [events, setEvents] = useState<HistoryEvent[]>([])
  const [older, setOlder] = useState<number | undefined>()
  const [floor, setFloor] = useState(0)
  const [error, setError] = useState<Error | undefined>()
  const [loading, setLoading] = useState(false)
  /** Reads the versions in [max(floor, to - WINDOW + 1), to], newest first, and appends them. */
  const window = async (to: number, reset: boolean) => {
    setLoading(true)
    try {
      // Starting at the floor the status gave avoids a request that is sure to be COMPACTED.
      let from = Math.max(1, compactRevision ?? 0, to - WINDOW + 1)
      const read = (start: number) => api.history(key, { from: start, to, limit: 2000 })
      let r = await read(from).catch((err: Error) => {
        if (!(err instanceof ApiError) || err.compactRevision === undefined) throw err
        from = err.compactRevision // the window reached below the floor: read from the floor
        return read(from)
      })
      const found = [...r.events]
      // A key has at most one event per revision, so a window holds at most WINDOW of them.
      while (r.more) {
        r = await read(r.nextRevision)
        found.push(...r.events)
      }
      const kept = r.header.compactRevision
      setFloor(kept)
      const newest = found.reverse()
      setEvents((old) => (reset ? newest : [...old, ...newest]))
      setOlder(from > Math.max(kept, 1) ? from - 1 : undefined)
      setError(undefined)
    } catch (err) {
      setError(err as Error)
    } finally {
      setLoading(false)
    }
  }
  const top = revParam(route.params) ?? head
  useEffect(() => {
    setEvents([])
    setError(undefined)
    if (key && top !== undefined && compactRevision !== undefined) void window(top, true)
  }, [key, top === undefined, compactRevision === undefined])
  if (!key) return html`<p>Pick a key in <a href=${href('keys')}>Keys</a>.</p>`
  return html`<div>
    <h2>History of <span data-testid="history-key">${key}</span></h2>
    <p>
      <a href=${href('keys', { prefix: key.slice(0, key.lastIndexOf('/') + 1), key, rev: revParam(route.params) })}>Show in Keys</a> ·
      newest first
    </p>
    ${error ? html`<${Problem} error=${error} />` : ''}
    <div aria-label="Versions" data-testid="versions">${events.map((e) => html`<${Version} e=${e} showKey=${false} />`)}</div>
    ${events.length === 0 && !error && !loading ? html`<p class="muted">No versions in the revisions read so far.</p>` : ''}
    ${loading ? html`<p class="loading">Reading the log…</p>` : ''}
    ${older !== undefined && !loading ? html`<button onClick=${() => void window(older, false)}>Older… (before revision ${older + 1})</button>` : ''}
    ${older === undefined && floor > 1 && !loading ? html`<div class="notice" data-code="COMPACTED">History before revision ${floor} was compacted; it is available from revision ${floor} on.</div>` : ''}
  </div>`
}

export function RevisionView({ route, head }: { route: Route; head: number | undefined }) {
  const rev = revParam(route.params) ?? head
  const r = useAsync(
    () => (rev === undefined ? Promise.resolve(undefined) : api.history('', { all: true, from: rev, to: rev, limit: 1000 })),
    [rev],
  )
  const goto = (n: number) => (location.hash = href('revision', { rev: n }))
  // A layout effect: the keys work as soon as the revision shows, not one frame later.
  useLayoutEffect(() => {
    const on = (e: KeyboardEvent) => {
      if ((e.target as HTMLElement).closest('input') || rev === undefined) return
      if (e.key === '[' && rev > 1) goto(rev - 1)
      if (e.key === ']') goto(rev + 1)
    }
    addEventListener('keydown', on)
    return () => removeEventListener('keydown', on)
  }, [rev])
  if (rev === undefined) return html`<p class="loading">Loading…</p>`
  if (rev > (head ?? Infinity))
    return html`<div class="notice" data-code="FUTURE_REVISION">Revision ${rev} has not been written yet (the head is ${head}).</div>`
  const events = r.data?.events ?? []
  return html`<div>
    <div class="pick">
      <button onClick=${() => goto(rev - 1)} disabled=${rev <= 1} aria-label="Previous revision">← ${rev - 1}</button>
      <h2 style="margin:0">Revision <span data-testid="revision">${rev}</span></h2>
      <button onClick=${() => goto(rev + 1)} disabled=${head !== undefined && rev >= head} aria-label="Next revision">${rev + 1} →</button>
      <span class="muted"><kbd>[</kbd> <kbd>]</kbd> to step</span>
      ${events[0] ? html`<span class="muted">${fmtTime(events[0].time)} · ${events.length} change(s)${authorText(events[0]) ? html` · by <span data-testid="revision-who">${authorText(events[0])}</span>` : ''}</span>` : ''}
    </div>
    ${r.error ? html`<${Problem} error=${r.error} />` : ''}
    ${r.data && events.length === 0 && rev <= 1 ? html`<p class="muted">Revision 1 is the empty store.</p>` : ''}
    ${r.data && events.length === 0 && rev > 1 ? html`<p class="muted">Nothing of this revision is left in the log (compaction keeps only what later reads need).</p>` : ''}
    <div data-testid="revision-events">${events.map((e) => html`<${Version} e=${e} showKey=${true} />`)}</div>
  </div>`
}
