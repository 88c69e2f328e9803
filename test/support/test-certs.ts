/**
 * Throwaway certificates made with openssl in `dir`, valid for localhost and 127.0.0.1 for two days:
 * makeTestCerts gives a CA with a server and a client certificate (ca.crt, server.crt and server.key with
 * CN localhost, client.crt and client.key with CN client); makeCertificates a CA and any certificates.
 */
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

export interface TestCerts {
  ca: string
  serverCert: string
  serverKey: string
  clientCert: string
  clientKey: string
}

export function makeTestCerts(dir: string): TestCerts {
  makeCertificates(dir, { server: '/CN=localhost', client: '/CN=client' })
  return {
    ca: join(dir, 'ca.crt'),
    serverCert: join(dir, 'server.crt'),
    serverKey: join(dir, 'server.key'),
    clientCert: join(dir, 'client.crt'),
    clientKey: join(dir, 'client.key'),
  }
}

/** A CA (ca.crt, ca.key) and, for each entry, NAME.key and NAME.crt signed by it with the subject given. */
export function makeCertificates(dir: string, subjects: Record<string, string>): void {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' })
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=kvlog-test-ca')
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n')
  for (const [name, subject] of Object.entries(subjects)) {
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject)
    ssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '2',
      '-extfile',
      'san.ext',
    )
  }
}

/** `kvlog serve` flags for TLS with dir/NAME.crt and NAME.key, requiring client certificates of dir's CA. */
export function tlsServeArgs(dir: string, name = 'server'): string[] {
  return [
    '--tls-cert-file',
    join(dir, `${name}.crt`),
    '--tls-key-file',
    join(dir, `${name}.key`),
    '--tls-client-ca-file',
    join(dir, 'ca.crt'),
  ]
}

/**
 * etcdctl commands (run with root's certificate) that make users root and alice for certificates of
 * those CNs, alice with READWRITE on app/ only, then enable auth.
 */
export const ROOT_AND_ALICE_SETUP: readonly string[][] = [
  ['user', 'add', 'root', '--no-password'],
  ['user', 'grant-role', 'root', 'root'],
  ['user', 'add', 'alice', '--no-password'],
  ['role', 'add', 'app'],
  ['role', 'grant-permission', 'app', 'readwrite', '--prefix', 'app/'],
  ['user', 'grant-role', 'alice', 'app'],
  ['auth', 'enable'],
]
