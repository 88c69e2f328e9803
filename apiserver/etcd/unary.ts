/** Adapts an async handler to grpc-js's unary callback style, with errors mapped as etcd's (errors.ts). */
import type { sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js'
import { toGrpcError } from './errors.js'
import type { Message } from './proto.js'

export type UnaryHandler = (call: ServerUnaryCall<Message, Message>, callback: sendUnaryData<Message>) => void

export function unary(handler: (request: Message) => Promise<Message> | Message): UnaryHandler {
  return (call, callback) => {
    let result: Promise<Message>
    try {
      result = Promise.resolve(handler(call.request))
    } catch (err) {
      result = Promise.reject(err)
    }
    result.then(
      (response) => callback(null, response),
      (err) => callback(toGrpcError(err)),
    )
  }
}
