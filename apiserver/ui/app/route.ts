/**
 * The view and its parameters live in the URL fragment, `#/<view>?<params>` (e.g.
 * `#/keys?prefix=/registry/pods/&rev=1200`), so every view can be shared, bookmarked and reloaded, and the
 * server needs no routes for them. `rev` is the picked revision (absent: the head).
 */
import { useEffect, useState } from 'preact/hooks'

export type View = 'timeline' | 'keys' | 'key' | 'revision' | 'status'
export const VIEWS: View[] = ['timeline', 'keys', 'key', 'revision', 'status']

export interface Route {
  view: View
  params: URLSearchParams
}

export function parseRoute(hash: string): Route {
  const body = hash.replace(/^#\/?/, '')
  const q = body.indexOf('?')
  const name = (q < 0 ? body : body.slice(0, q)) as View
  return { view: VIEWS.includes(name) ? name : 'timeline', params: new URLSearchParams(q < 0 ? '' : body.slice(q + 1)) }
}

export function href(view: View, params: Record<string, string | number | undefined> = {}): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v))
  const s = q.toString()
  return `#/${view}${s ? `?${s}` : ''}`
}

export function go(view: View, params: Record<string, string | number | undefined> = {}): void {
  location.hash = href(view, params)
}

/** The current route; re-renders on every fragment change (links, back and forward). */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash))
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash))
    addEventListener('hashchange', on)
    return () => removeEventListener('hashchange', on)
  }, [])
  return route
}

/** A revision parameter: a positive integer, or undefined. */
export function revParam(p: URLSearchParams, name = 'rev'): number | undefined {
  const v = p.get(name)
  return v !== null && /^[0-9]+$/.test(v) && Number(v) > 0 ? Number(v) : undefined
}
