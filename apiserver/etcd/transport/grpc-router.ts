/**
 * kvlog's gRPC server on the client port's HTTP/2 streams (Node's http2): routes a stream whose path is /package.Service/Method to the
 * service module's handler (the same modules grpc-js serves: kv-service.ts, watch-service.ts, ...), with
 * grpc-js's calling conventions: unary handlers get (call, callback), streaming handlers get (call).
 * Unknown services and methods are UNIMPLEMENTED; a grpc-encoding other than identity is UNIMPLEMENTED
 * (compression is not served; clients send identity unless told otherwise).
 */
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2'
import type { Message } from '../proto.js'
import { serviceMethods } from '../proto.js'
import { GrpcCall, parseTimeout, type CallHandler, type FailedCall, type MethodInfo } from './grpc-call.js'
import { STATUS } from './grpc-status.js'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- handlers are typed by grpc-js's call types, duck-typed here
type AnyHandler = (call: any, callback?: (err: unknown, response?: Message | Buffer) => void) => void
export type ServiceImplementation = Record<string, unknown>

interface Route {
  info: MethodInfo
  /** The handler in grpc-js's convention; a unary one is given a callback that answers the call. */
  start: CallHandler
}

export class GrpcRouter {
  private readonly routes = new Map<string, Route>()
  private readonly services = new Set<string>()

  /** `onFailed`: every call that ends with an error status (grpc-call.ts), for the server's log. */
  constructor(
    private readonly maxReceiveBytes: number,
    private readonly onFailed?: (call: FailedCall) => void,
  ) {}

  /** Serves a proto service (e.g. 'etcdserverpb.KV') with its handlers; methods without one are UNIMPLEMENTED. */
  add(service: string, implementation: ServiceImplementation): void {
    this.services.add(service)
    for (const m of serviceMethods(service)) {
      const handler = implementation[m.name]
      if (typeof handler !== 'function') continue
      const h = handler as AnyHandler
      const start: CallHandler = m.requestStream || m.responseStream ? h : (call) => h(call, (err, response) => call.answer(err, response))
      this.routes.set(`/${service}/${m.name}`, { info: m, start })
    }
  }

  handle(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    const path = headers[':path'] ?? ''
    const route = this.routes.get(path)
    const call = new GrpcCall(
      stream,
      route?.info ?? NO_METHOD,
      this.maxReceiveBytes,
      parseTimeout(headers['grpc-timeout']),
      headers,
      this.onFailed,
    )
    const encoding = headers['grpc-encoding']
    if (encoding !== undefined && encoding !== 'identity') {
      return call.fail(STATUS.UNIMPLEMENTED, `grpc: Decompressor is not installed for grpc-encoding "${String(encoding)}"`)
    }
    if (route === undefined) {
      const [, service = '', method = ''] = /^\/([^/]*)\/([^/]*)$/.exec(path) ?? []
      return call.fail(
        STATUS.UNIMPLEMENTED,
        this.services.has(service) ? `unknown method ${method} for service ${service}` : `unknown service ${service}`,
      )
    }
    if (route.info.requestStream) call.run(route.start)
    else call.awaitRequest(route.start)
  }
}

const NO_METHOD: MethodInfo = {
  request: undefined as never,
  response: undefined as never,
  requestStream: false,
  responseStream: false,
}
