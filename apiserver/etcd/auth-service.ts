/**
 * etcd's Auth service over gRPC: the calls of auth-calls.ts, with the caller taken from the call's
 * credentials (caller.ts). Authenticate ignores credentials: it is how a client gets them.
 */
import type { UntypedServiceImplementation } from '@grpc/grpc-js'
import type { EtcdDeps } from './deps.js'
import { authCalls } from './auth-calls.js'
import { callerOf } from './caller.js'
import { callSource } from './call-source.js'
import { unary } from './unary.js'

export function authService({ auth, headers }: EtcdDeps): UntypedServiceImplementation {
  const calls = authCalls(auth, headers)
  const service: UntypedServiceImplementation = {}
  for (const [name, call] of Object.entries(calls)) {
    service[name] = unary((request, grpcCall) =>
      call(name === 'Authenticate' ? auth.identify({}) : callerOf(auth, grpcCall), request, callSource(grpcCall)),
    )
  }
  return service
}
