/**
 * The client's credentials: a user and password (exchanged for a token at POST /v1/auth/authenticate,
 * on the first request that needs it) or a fixed bearer token (a kube-style static token, or one made
 * elsewhere). The token goes in `Authorization: Bearer TOKEN` on every request and WebSocket upgrade.
 *
 * A token can end (its TTL lapses, the server restarts, or, for a JWT, the auth state changes): a request
 * refused with 401 was not applied, so with a password the client authenticates again and sends it once
 * more, writes included. A server with auth disabled answers Authenticate with FAILED_PRECONDITION: then
 * requests go without a token, as etcd clients do.
 */
export interface Credentials {
  user?: string
  password?: string
  /** A bearer token to send as is (instead of user and password). */
  token?: string
}

export type Authenticate = (name: string, password: string) => Promise<string>

export class TokenSource {
  private token: Promise<string | undefined> | undefined

  constructor(
    private readonly credentials: Credentials,
    private readonly authenticate: Authenticate,
  ) {
    if (credentials.token === undefined && (credentials.user === undefined || credentials.password === undefined))
      throw new TypeError('credentials need a token, or a user and a password')
  }

  /** A fresh token can be had after a 401 (a password is known). */
  get renewable(): boolean {
    return this.credentials.token === undefined
  }

  /** The Authorization header to send, or undefined (auth disabled on the server). */
  async header(): Promise<string | undefined> {
    const token = await this.current()
    return token === undefined ? undefined : `Bearer ${token}`
  }

  /** After a 401: the next header() authenticates again. */
  invalidate(): void {
    if (this.renewable) this.token = undefined
  }

  private current(): Promise<string | undefined> {
    if (this.credentials.token !== undefined) return Promise.resolve(this.credentials.token)
    if (this.token === undefined) {
      const { user, password } = this.credentials
      const pending = this.authenticate(user!, password!).catch((err: unknown) => {
        if ((err as { code?: string }).code === 'FAILED_PRECONDITION') return undefined // auth is not enabled
        if (this.token === pending) this.token = undefined // a wrong password is not remembered
        throw err
      })
      this.token = pending
    }
    return this.token
  }
}
