/**
 * Does the server at an http:// endpoint speak TLS? Asked only after a plain-HTTP request failed on the
 * connection: a TLS handshake that gets as far as the server's certificate means the endpoint wants
 * https://. The certificate is not checked (only its presence is), and nothing is sent over it.
 */
import { connect } from 'node:tls'

const PROBE_TIMEOUT_MS = 2_000

export function speaksTls(endpoint: string): Promise<boolean> {
  const url = new URL(endpoint)
  return new Promise((resolve) => {
    const socket = connect({
      host: url.hostname,
      port: Number(url.port || 80),
      rejectUnauthorized: false,
      ...(/^[0-9.]+$|:/.test(url.hostname) ? {} : { servername: url.hostname }),
    })
    const done = (answer: boolean) => {
      socket.destroy()
      resolve(answer)
    }
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(false))
    socket.once('secureConnect', () => done(true))
    socket.once('error', () => done(false))
  })
}
