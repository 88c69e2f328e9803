/**
 * etcd's protobuf messages and gRPC services, from our own .proto files (apiserver/etcd/proto/), compiled
 * at startup by protobufjs.
 *
 * Decoded requests are plain objects with the proto's field names (keepCase), 64-bit integers as decimal
 * strings (a lease id may exceed 2^53), enums as their names, bytes as Buffers, and every field present
 * (proto3 defaults). Responses are encoded from plain objects whose 64-bit fields are numbers or decimal
 * strings and whose enums are numbers. A handler may also hand grpc-js an already-encoded Buffer (the watch
 * stream encodes each batch of events once for all its watchers): serializers pass Buffers through.
 */
import { fileURLToPath } from 'node:url'
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js'
import protobuf from 'protobufjs'

const PROTO_DIR = fileURLToPath(new URL('../../../apiserver/etcd/proto/', import.meta.url))

const root = new protobuf.Root()
root.resolvePath = (_origin, target) => PROTO_DIR + target
root.loadSync(['rpc.proto', 'v3lock.proto', 'v3election.proto'], { keepCase: true })
root.resolveAll()

export type Message = Record<string, unknown>

const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true }

export function messageType(name: string): protobuf.Type {
  return root.lookupType(name)
}

export function encode(type: protobuf.Type, value: Message): Buffer {
  const bytes = type.encode(value).finish()
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

export function decode(type: protobuf.Type, bytes: Buffer): Message {
  return type.toObject(type.decode(bytes), TO_OBJECT)
}

/** A grpc-js service definition for one of our proto services (e.g. 'etcdserverpb.KV'). */
export function serviceDefinition(name: string): ServiceDefinition {
  const service = root.lookupService(name)
  const definition: Record<string, MethodDefinition<Message, Message | Buffer>> = {}
  for (const method of service.methodsArray) {
    const request = root.lookupType(method.resolvedRequestType!.fullName)
    const response = root.lookupType(method.resolvedResponseType!.fullName)
    definition[method.name] = {
      path: `/${name}/${method.name}`,
      requestStream: method.requestStream === true,
      responseStream: method.responseStream === true,
      requestSerialize: (value: Message) => encode(request, value),
      requestDeserialize: (bytes: Buffer) => decode(request, bytes),
      responseSerialize: (value: Message | Buffer) => (Buffer.isBuffer(value) ? value : encode(response, value)),
      responseDeserialize: (bytes: Buffer) => decode(response, bytes),
      originalName: method.name,
    }
  }
  return definition as ServiceDefinition
}

/** Each method of a proto service with its message types (for kvlog's own gRPC server and the gateway). */
export function serviceMethods(
  name: string,
): Array<{ name: string; request: protobuf.Type; response: protobuf.Type; requestStream: boolean; responseStream: boolean }> {
  const service = root.lookup(name)
  if (!(service instanceof protobuf.Service)) return []
  return service.methodsArray.map((method) => ({
    name: method.name,
    request: root.lookupType(method.resolvedRequestType!.fullName),
    response: root.lookupType(method.resolvedResponseType!.fullName),
    requestStream: method.requestStream === true,
    responseStream: method.responseStream === true,
  }))
}

/** Enum values for responses (encode takes numbers). */
export const ALARM_TYPE = { NONE: 0, NOSPACE: 1, CORRUPT: 2 } as const

/** Every service of the loaded .proto files, by full name (e.g. etcdserverpb.KV, v3lockpb.Lock). */
export function protoServices(): string[] {
  const out: string[] = []
  const walk = (ns: protobuf.NamespaceBase): void => {
    for (const nested of ns.nestedArray) {
      if (nested instanceof protobuf.Service) out.push(nested.fullName.replace(/^\./, ''))
      else if (nested instanceof protobuf.Namespace) walk(nested)
    }
  }
  walk(root)
  return out.sort()
}
