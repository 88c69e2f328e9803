/** Adapts an async handler to grpc-js's unary callback style, with errors mapped as etcd's (errors.ts). */
import type { sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js'
import { toGrpcError } from './errors.js'
import type { Message } from './proto.js'

/** A handler may answer with an object for proto.ts to encode, or with bytes it encoded itself (wire.ts). */
export type UnaryHandler = (call: ServerUnaryCall<Message, Message | Buffer>, callback: sendUnaryData<Message | Buffer>) => void

/** What a handler may ask of its call besides the request: the credentials it carries (caller.ts). */
export type UnaryCall = ServerUnaryCall<Message, Message | Buffer>

export function unary(handler: (request: Message, call: UnaryCall) => Promise<Message | Buffer> | Message | Buffer): UnaryHandler {
  return (call, callback) => {
    let result: Promise<Message | Buffer>
    try {
      result = Promise.resolve(handler(call.request, call))
    } catch (err) {
      result = Promise.reject(err)
    }
    result.then(
      (response) => callback(null, response),
      (err) => callback(toGrpcError(err)),
    )
  }
}

/**
 * For handlers that wait (Lock, Campaign): the signal aborts when the call is cancelled (the client went
 * away, or its deadline passed).
 */
export function unaryWithCancel(
  handler: (request: Message, signal: AbortSignal, call: UnaryCall) => Promise<Message | Buffer>,
): UnaryHandler {
  return (call, callback) => {
    const abort = new AbortController()
    call.once('cancelled', () => abort.abort())
    unary((request) => handler(request, abort.signal, call))(call, callback)
  }
}
