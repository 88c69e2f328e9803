/**
 * TLS for both listeners (HTTP/WebSocket and gRPC), from tlsCertFile / tlsKeyFile and, to require client
 * certificates, tlsClientCaFile. Half a configuration is an error at startup, not a silent plain listener.
 */
import { readFile } from 'node:fs/promises'
import type { Config } from '../config/index.js'
import { KvlogError } from '../log/errors.js'

export interface TlsFiles {
  cert: Buffer
  key: Buffer
  /** Present when client certificates are required. */
  ca?: Buffer
}

export async function loadTls(config: Config): Promise<TlsFiles | undefined> {
  const { tlsCertFile, tlsKeyFile, tlsClientCaFile } = config
  if (tlsCertFile === '' && tlsKeyFile === '') {
    if (tlsClientCaFile !== '') throw bad('tlsClientCaFile', 'needs tlsCertFile and tlsKeyFile')
    return undefined
  }
  if (tlsCertFile === '' || tlsKeyFile === '')
    throw bad(tlsCertFile === '' ? 'tlsCertFile' : 'tlsKeyFile', 'TLS needs both tlsCertFile and tlsKeyFile')
  const read = (path: string, field: string) =>
    readFile(path).catch((err: Error) => {
      throw bad(field, `cannot read ${path}: ${err.message}`)
    })
  return {
    cert: await read(tlsCertFile, 'tlsCertFile'),
    key: await read(tlsKeyFile, 'tlsKeyFile'),
    ...(tlsClientCaFile !== '' ? { ca: await read(tlsClientCaFile, 'tlsClientCaFile') } : {}),
  }
}

function bad(field: string, message: string): KvlogError {
  return new KvlogError('INVALID_ARGUMENT', `${field}: ${message}`, { field })
}
