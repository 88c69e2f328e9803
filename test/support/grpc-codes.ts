/** Small helpers for tests that call the etcd door and look at the outcome's stable code. */
import { Metadata, type ServiceError } from '@grpc/grpc-js'

/** The kvlog code of a call's failure (its `kvlog-code` trailer, else the gRPC status), or 'ok'. */
export async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p
    return 'ok'
  } catch (err) {
    return String((err as ServiceError).metadata?.get('kvlog-code')[0] ?? (err as ServiceError).code)
  }
}

/** Call metadata carrying an auth token, as etcd clients send it. */
export function tokenMd(token: string): Metadata {
  const m = new Metadata()
  m.set('token', token)
  return m
}
