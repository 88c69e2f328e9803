/**
 * The logged-in user and its token, kept in sessionStorage (gone with the tab, never in a cookie or the
 * URL). Every request sends it as `Authorization: Bearer`; the live watch offers it as a WebSocket
 * subprotocol (a browser's WebSocket cannot set headers). A 401 anywhere ends the session, and the
 * shell shows the login form again.
 */
const KEY = 'kvlog.session'

export interface Session {
  user: string
  token: string
}

type Listener = (s: Session | undefined, expired: boolean) => void
const listeners = new Set<Listener>()

export function session(): Session | undefined {
  try {
    const s = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as Session | null
    return s && typeof s.user === 'string' && typeof s.token === 'string' ? s : undefined
  } catch {
    return undefined
  }
}

function set(s: Session | undefined, expired: boolean): void {
  if (s) sessionStorage.setItem(KEY, JSON.stringify(s))
  else sessionStorage.removeItem(KEY)
  for (const l of listeners) l(s, expired)
}

export const logIn = (s: Session) => set(s, false)
export const logOut = () => set(undefined, false)
/** The server refused the token (expired, revoked, or older than the auth state). */
export const sessionExpired = () => set(undefined, true)

export function onSession(l: Listener): () => void {
  listeners.add(l)
  return () => listeners.delete(l)
}

/** Headers for a request: the bearer token when logged in. */
export function authHeaders(): Record<string, string> {
  const s = session()
  return s ? { authorization: `Bearer ${s.token}` } : {}
}

/** WebSocket subprotocols for the watch: `kvlog.watch`, and the token in base64url when logged in. */
export function watchProtocols(): string[] {
  const s = session()
  if (!s) return ['kvlog.watch']
  const b64 = btoa(String.fromCharCode(...new TextEncoder().encode(s.token)))
  return ['kvlog.watch', `base64url.bearer.kvlog.${b64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`]
}
