/**
 * JWT tokens, as etcd's `jwt` token provider makes them (`--auth-token jwt,pub-key=FILE,priv-key=FILE,
 * sign-method=RS256[,ttl=5m]`): a JWS signed with the configured key whose claims are
 * `{"username", "revision", "exp"}`, revision being the auth revision when the token was issued.
 *
 * Tokens are stateless: any member that holds the key verifies them, they survive restarts, and nothing
 * revokes one before `exp` except a change of the auth state (the authorizer refuses a token issued at
 * an older auth revision, etcd's "revision of auth store is old", and clients then authenticate again).
 *
 * Verification accepts only the configured algorithm (so "none" and an HMAC made with the public key as
 * the secret are refused), a valid signature, `exp` not passed, `nbf` and `iat` not in the future, a
 * string username and a numeric revision; anything else is an invalid token, as etcd. With a public key
 * only, the server verifies tokens but cannot issue them.
 */
import { constants, createHmac, createPrivateKey, createPublicKey, sign, timingSafeEqual, verify, type KeyObject } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { parseDuration } from '../../config/parse-values.js'
import { KvlogError } from '../../log/errors.js'
import { authError } from './errors.js'
import type { TokenInfo, TokenProvider } from './tokens.js'

const HASHES = { '256': 'sha256', '384': 'sha384', '512': 'sha512' } as const
const CURVES = { '256': 'prime256v1', '384': 'secp384r1', '512': 'secp521r1' } as const
type Bits = keyof typeof HASHES

export interface JwtOptions {
  /** RS256/384/512, PS256/384/512, ES256/384/512 or HS256/384/512 (etcd's sign methods). */
  signMethod: string
  /** PEM file of the public key (RS, PS, ES); optional when priv-key is given. */
  pubKey?: string
  /** PEM file of the private key (RS, PS, ES), or the secret (HS). Without it tokens are verify-only. */
  privKey?: string
  /** Token lifetime in ms (etcd's default: 5 minutes). */
  ttlMs: number
}

function bad(message: string): KvlogError {
  return new KvlogError('INVALID_ARGUMENT', `authToken: ${message}`, { field: 'authToken' })
}

/**
 * The `--auth-token` value: undefined for `simple`, else the JWT options. Unknown options are an error
 * (etcd only warns: a mistyped key name would otherwise leave the server with a default).
 */
export function parseAuthToken(value: string): JwtOptions | undefined {
  const [kind, ...pairs] = value.split(',')
  if (kind === 'simple' && pairs.length === 0) return undefined
  if (kind !== 'jwt') throw bad(`expected "simple" or "jwt,sign-method=...,priv-key=...,pub-key=...", got ${JSON.stringify(value)}`)
  const opts: Partial<JwtOptions> & { ttlMs: number } = { ttlMs: 5 * 60_000 }
  for (const pair of pairs) {
    const eq = pair.indexOf('=')
    const k = eq < 0 ? pair : pair.slice(0, eq)
    const v = eq < 0 ? '' : pair.slice(eq + 1)
    if (k === 'sign-method') opts.signMethod = v
    else if (k === 'pub-key') opts.pubKey = v
    else if (k === 'priv-key') opts.privKey = v
    else if (k === 'ttl') {
      try {
        opts.ttlMs = parseDuration(v)
      } catch (err) {
        throw bad(`ttl: ${(err as Error).message}`)
      }
      if (opts.ttlMs <= 0) throw bad('ttl must be positive')
    } else throw bad(`unknown jwt option ${JSON.stringify(k)} (known: sign-method, pub-key, priv-key, ttl)`)
  }
  if (opts.signMethod === undefined) throw bad('jwt needs sign-method')
  if (!/^(RS|PS|ES|HS)(256|384|512)$/.test(opts.signMethod)) throw bad(`unsupported sign-method ${JSON.stringify(opts.signMethod)}`)
  if (opts.pubKey === undefined && opts.privKey === undefined) throw bad('jwt needs priv-key (and/or pub-key)')
  return opts as JwtOptions
}

const b64 = (b: Buffer | string): string => Buffer.from(b).toString('base64url')

export class JwtTokens implements TokenProvider {
  private constructor(
    private readonly alg: string,
    private readonly signKey: KeyObject | Buffer | undefined,
    private readonly verifyKey: KeyObject | Buffer,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  static async load(o: JwtOptions, now: () => number = Date.now): Promise<JwtTokens> {
    const read = (path: string, what: string) =>
      readFile(path).catch((err: Error) => {
        throw bad(`cannot read ${what} ${path}: ${err.message}`)
      })
    const family = o.signMethod.slice(0, 2)
    const bits = o.signMethod.slice(2) as Bits
    if (family === 'HS') {
      if (o.privKey === undefined) throw bad(`${o.signMethod} needs priv-key (the shared secret)`)
      const secret = await read(o.privKey, 'priv-key')
      return new JwtTokens(o.signMethod, secret, secret, o.ttlMs, now)
    }
    const parse = (pem: Buffer, what: string, make: (pem: Buffer) => KeyObject): KeyObject => {
      try {
        return make(pem)
      } catch (err) {
        throw bad(`${what} is not a PEM key: ${(err as Error).message}`)
      }
    }
    const priv = o.privKey === undefined ? undefined : parse(await read(o.privKey, 'priv-key'), 'priv-key', createPrivateKey)
    const pub = o.pubKey === undefined ? undefined : parse(await read(o.pubKey, 'pub-key'), 'pub-key', createPublicKey)
    const verifyKey = pub ?? createPublicKey(priv!)
    const wantType = family === 'ES' ? 'ec' : 'rsa'
    for (const [k, what] of [
      [priv, 'priv-key'],
      [pub, 'pub-key'],
    ] as const) {
      if (k === undefined) continue
      // PS methods take plain RSA keys too (as etcd's).
      const type = k.asymmetricKeyType === 'rsa-pss' ? 'rsa' : k.asymmetricKeyType
      if (type !== wantType) throw bad(`${what} is a ${k.asymmetricKeyType} key; ${o.signMethod} needs ${wantType}`)
      if (family === 'ES' && k.asymmetricKeyDetails?.namedCurve !== CURVES[bits])
        throw bad(`${what} is on curve ${k.asymmetricKeyDetails?.namedCurve}; ${o.signMethod} needs ${CURVES[bits]}`)
    }
    if (priv !== undefined && pub !== undefined) {
      const der = (k: KeyObject) => k.export({ type: 'spki', format: 'der' })
      if (!der(createPublicKey(priv)).equals(der(pub))) throw bad('pub-key is not the public half of priv-key')
    }
    return new JwtTokens(o.signMethod, priv, verifyKey, o.ttlMs, now)
  }

  issue(user: string, revision: number): string {
    if (this.signKey === undefined) throw authError('JWT_VERIFY_ONLY')
    const header = b64(JSON.stringify({ alg: this.alg, typ: 'JWT' }))
    const claims = b64(JSON.stringify({ exp: Math.floor((this.now() + this.ttlMs) / 1000), revision, username: user }))
    const input = `${header}.${claims}`
    return `${input}.${b64(this.signature(input))}`
  }

  use(token: string): TokenInfo | undefined {
    const parts = token.split('.')
    if (parts.length !== 3) return undefined
    const [h, c, s] = parts as [string, string, string]
    let header: unknown
    let claims: unknown
    try {
      header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'))
      claims = JSON.parse(Buffer.from(c, 'base64url').toString('utf8'))
    } catch {
      return undefined
    }
    if (typeof header !== 'object' || header === null || (header as { alg?: unknown }).alg !== this.alg) return undefined
    if (!this.verifies(`${h}.${c}`, Buffer.from(s, 'base64url'))) return undefined
    if (typeof claims !== 'object' || claims === null) return undefined
    const { username, revision, exp, nbf, iat } = claims as Record<string, unknown>
    const nowS = this.now() / 1000
    if (exp !== undefined && (typeof exp !== 'number' || nowS > exp)) return undefined
    if (nbf !== undefined && (typeof nbf !== 'number' || nowS < nbf)) return undefined
    if (iat !== undefined && (typeof iat !== 'number' || nowS < iat)) return undefined
    if (typeof username !== 'string' || typeof revision !== 'number' || !Number.isSafeInteger(revision)) return undefined
    return { user: username, revision }
  }

  // A JWT cannot be revoked: a change of user or password raises the auth revision, which ends it.
  revokeUser(): void {}

  clear(): void {}

  close(): void {}

  private signature(input: string): Buffer {
    const family = this.alg.slice(0, 2)
    const hash = HASHES[this.alg.slice(2) as Bits]
    const key = this.signKey!
    if (family === 'HS')
      return createHmac(hash, key as Buffer)
        .update(input)
        .digest()
    if (family === 'ES') return sign(hash, Buffer.from(input), { key: key as KeyObject, dsaEncoding: 'ieee-p1363' })
    if (family === 'PS')
      return sign(hash, Buffer.from(input), {
        key: key as KeyObject,
        padding: constants.RSA_PKCS1_PSS_PADDING,
        saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
      })
    return sign(hash, Buffer.from(input), key as KeyObject)
  }

  private verifies(input: string, sig: Buffer): boolean {
    const family = this.alg.slice(0, 2)
    const hash = HASHES[this.alg.slice(2) as Bits]
    const key = this.verifyKey
    try {
      if (family === 'HS') {
        const want = createHmac(hash, key as Buffer)
          .update(input)
          .digest()
        return want.length === sig.length && timingSafeEqual(want, sig)
      }
      if (family === 'ES') return verify(hash, Buffer.from(input), { key: key as KeyObject, dsaEncoding: 'ieee-p1363' }, sig)
      if (family === 'PS')
        return verify(
          hash,
          Buffer.from(input),
          { key: key as KeyObject, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO },
          sig,
        )
      return verify(hash, Buffer.from(input), key as KeyObject, sig)
    } catch {
      return false
    }
  }
}
