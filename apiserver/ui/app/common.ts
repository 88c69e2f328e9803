/** Pieces every view uses: loading data with errors kept by code, the compacted notice, the revision picker. */
import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import { api, ApiError } from './api.js'

export { html }

export interface Async<T> {
  data?: T
  error?: ApiError | Error
  loading: boolean
}

/** Runs `load` whenever `deps` change; a newer load wins over a slower older one. */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): Async<T> {
  const [state, setState] = useState<Async<T>>({ loading: true })
  useEffect(() => {
    let current = true
    setState((s) => ({ ...s, loading: true }))
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: Error) => current && setState({ error, loading: false }),
    )
    return () => {
      current = false
    }
  }, deps)
  return state
}

/** An error by its code: below the floor (from which revision the history is available), a future revision, no permission, not logged in. */
export function Problem({ error }: { error: Error }) {
  if (error instanceof ApiError && error.code === 'COMPACTED') {
    const from = error.compactRevision
    return html`<div class="notice" role="status" data-code="COMPACTED">
      The history at this revision was compacted. It is available from revision <strong>${from}</strong> on${' '}
      ${from !== undefined ? html`(<a href=${withRev(from)}>show revision ${from}</a>)` : ''}.
    </div>`
  }
  if (error instanceof ApiError && error.code === 'FUTURE_REVISION') {
    return html`<div class="notice" role="status" data-code="FUTURE_REVISION">
      That revision has not been written yet (the head is ${String(error.details.currentRevision ?? '?')}).
    </div>`
  }
  if (error instanceof ApiError && error.code === 'PERMISSION_DENIED') {
    return html`<div class="notice" role="status" data-code="PERMISSION_DENIED">
      Permission denied: your user may not read this (${error.message}). A role with READ on these keys is needed.
    </div>`
  }
  if (error instanceof ApiError && error.code === 'UNAUTHENTICATED') {
    return html`<div class="notice" role="status" data-code="UNAUTHENTICATED">
      Not logged in, or the name or password is wrong: ${error.message}
    </div>`
  }
  return html`<div class="error" role="alert" data-code=${error instanceof ApiError ? error.code : 'ERROR'}>${error.message}</div>`
}

/** The current URL with `rev` replaced. */
export function withRev(rev: number | undefined): string {
  const hash = location.hash || '#/timeline'
  const [path, query = ''] = hash.split('?')
  const q = new URLSearchParams(query)
  if (rev === undefined) q.delete('rev')
  else q.set('rev', String(rev))
  const s = q.toString()
  return `${path}${s ? `?${s}` : ''}`
}

/** Pick a revision (or a time, resolved by the server to the revision current then); empty = the head. */
export function RevisionPicker({ rev, head }: { rev: number | undefined; head: number | undefined }) {
  const [value, setValue] = useState(rev === undefined ? '' : String(rev))
  const [error, setError] = useState<Error | undefined>()
  useEffect(() => setValue(rev === undefined ? '' : String(rev)), [rev])
  const submit = async (e: Event) => {
    e.preventDefault()
    setError(undefined)
    const v = value.trim()
    if (v === '') return void (location.hash = withRev(undefined))
    if (/^[0-9]+$/.test(v)) return void (location.hash = withRev(Number(v)))
    if (!Number.isFinite(Date.parse(v))) return setError(new Error('Enter a revision number or a time (e.g. 2026-11-25T14:02:00Z)'))
    try {
      location.hash = withRev((await api.revisionAt(new Date(v).toISOString())).revision)
    } catch (err) {
      setError(err as Error)
    }
  }
  return html`<form class="pick" onSubmit=${submit}>
    <label for="pick-rev">Revision or time</label>
    <input
      id="pick-rev"
      name="rev"
      value=${value}
      placeholder=${head ? `head ${head}` : 'head'}
      onInput=${(e: Event) => setValue((e.target as HTMLInputElement).value)}
    />
    <button type="submit">Show</button>
    <button type="button" onClick=${() => (location.hash = withRev(undefined))}>Latest</button>
    ${rev !== undefined ? html`<span class="muted">at revision <strong data-testid="picked-rev">${rev}</strong></span>` : html`<span class="muted">at the head</span>`}
    ${error ? html`<${Problem} error=${error} />` : ''}
  </form>`
}

export function fmtBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let i = 0
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024
    i++
  }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`
}

export function fmtTime(iso: string | number): string {
  const d = new Date(iso)
  return Number.isFinite(d.getTime()) ? d.toISOString().replace('T', ' ').replace('Z', '') : ''
}
