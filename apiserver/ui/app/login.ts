/** The login form (auth on, no session) and the "logged in as … / Log out" control of the header. */
import { useState } from 'preact/hooks'
import { api } from './api.js'
import { html, Problem } from './common.js'
import { logIn, logOut, type Session } from './session.js'

export function LoginForm({ expired }: { expired: boolean }) {
  const [user, setUser] = useState('')
  const [password, setPassword] = useState('')
  const [error, setError] = useState<Error | undefined>()
  const [busy, setBusy] = useState(false)
  const submit = async (e: Event) => {
    e.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      logIn({ user, token: (await api.authenticate(user, password)).token })
    } catch (err) {
      setError(err as Error)
      setBusy(false)
    }
  }
  return html`<section class="panel login" aria-label="Log in">
    <h2>Log in</h2>
    <p class="muted">Auth is enabled on this server: log in as a kvlog user to browse its history.</p>
    ${expired ? html`<div class="notice" role="status" data-code="UNAUTHENTICATED" data-testid="session-expired">Your session expired or was ended by the server: log in again.</div>` : ''}
    <form onSubmit=${submit}>
      <label for="login-user">User</label>
      <input
        id="login-user"
        name="user"
        autocomplete="username"
        required
        value=${user}
        onInput=${(e: Event) => setUser((e.target as HTMLInputElement).value)}
      />
      <label for="login-password">Password</label>
      <input
        id="login-password"
        name="password"
        type="password"
        autocomplete="current-password"
        value=${password}
        onInput=${(e: Event) => setPassword((e.target as HTMLInputElement).value)}
      />
      <button type="submit" disabled=${busy}>Log in</button>
    </form>
    ${error ? html`<${Problem} error=${error} />` : ''}
  </section>`
}

export function SessionControl({ session }: { session: Session | undefined }) {
  if (!session) return ''
  return html`<span class="session"
    >logged in as <strong data-testid="user">${session.user}</strong>
    <button type="button" data-testid="logout" onClick=${logOut}>Log out</button></span
  >`
}
