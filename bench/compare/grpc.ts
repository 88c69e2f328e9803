/**
 * The gRPC client side of the comparison: grpc-js clients built from our own etcd .proto definitions
 * (apiserver/etcd/proto.ts), used the same way against etcd and kvlog, plus a cheap reader of
 * WatchResponse bytes so a watch generator costs less than the server it measures.
 */
import { makeGenericClientConstructor, credentials, type Client, type ServiceError } from '@grpc/grpc-js'
import { serviceDefinition, type Message } from '../../apiserver/etcd/proto.js'

type Unary = (request: Message, callback: (err: ServiceError | null, response?: Message) => void) => void

export interface EtcdClient {
  kv: Client & Record<'Put' | 'Range' | 'DeleteRange' | 'Compact', Unary>
  maintenance: Client & Record<'Status' | 'Defragment', Unary>
  /** Watch with raw response bytes (see readWatchResponse). */
  watch: Client & { Watch(): import('@grpc/grpc-js').ClientDuplexStream<Message, Buffer> }
  close(): void
}

const KV = makeGenericClientConstructor(serviceDefinition('etcdserverpb.KV'), 'KV')
const MAINTENANCE = makeGenericClientConstructor(serviceDefinition('etcdserverpb.Maintenance'), 'Maintenance')
const kvDefinition = serviceDefinition('etcdserverpb.KV')
/** KV with Range answering raw RangeResponse bytes (see readRangeResponse): a big list is not decoded whole. */
const RAW_RANGE_KV = makeGenericClientConstructor(
  { ...kvDefinition, Range: { ...kvDefinition.Range, responseDeserialize: (bytes: Buffer) => bytes } },
  'KV',
)
const watchDefinition = serviceDefinition('etcdserverpb.Watch')
const WATCH = makeGenericClientConstructor(
  {
    ...watchDefinition,
    Watch: { ...watchDefinition.Watch, responseDeserialize: (bytes: Buffer) => bytes },
  },
  'Watch',
)

const OPTIONS = {
  // One TCP connection per client object (grpc-js shares subchannels between equal channels otherwise).
  'grpc.use_local_subchannel_pool': 1,
  'grpc.max_receive_message_length': 2 ** 31 - 1,
  'grpc.max_send_message_length': 2 ** 31 - 1,
}

/** A client on its own connection to "host:port". */
export function connect(target: string): EtcdClient {
  const creds = credentials.createInsecure()
  const kv = new KV(target, creds, OPTIONS) as unknown as EtcdClient['kv']
  const channel = kv.getChannel()
  const maintenance = new MAINTENANCE(target, creds, { ...OPTIONS, channelOverride: channel }) as unknown as EtcdClient['maintenance']
  const watch = new WATCH(target, creds, { ...OPTIONS, channelOverride: channel }) as unknown as EtcdClient['watch']
  return { kv, maintenance, watch, close: () => kv.close() }
}

/** A client whose Range resolves with the response's bytes, on its own connection to "host:port". */
export function connectRawRange(
  target: string,
): Client & { Range(request: Message, callback: (err: ServiceError | null, response?: Buffer) => void): void } {
  return new RAW_RANGE_KV(target, credentials.createInsecure(), OPTIONS) as unknown as ReturnType<typeof connectRawRange>
}

export function rawRange(client: ReturnType<typeof connectRawRange>, request: Message): Promise<Buffer> {
  return new Promise((resolve, reject) => client.Range(request, (err, response) => (err ? reject(err) : resolve(response!))))
}

export function call(method: Unary, request: Message): Promise<Message> {
  return new Promise((resolve, reject) => method(request, (err, response) => (err ? reject(err) : resolve(response!))))
}

export async function put(client: EtcdClient, key: string, value: Buffer): Promise<number> {
  const r = await call(client.kv.Put.bind(client.kv), { key: Buffer.from(key), value })
  return Number((r.header as Message).revision)
}

/** Retries a Range until the server answers (for time-to-ready), up to timeoutMs. */
export async function waitForRange(target: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const client = connect(target)
    try {
      await call(client.kv.Range.bind(client.kv), { key: Buffer.from('/ready') })
      return
    } catch (err) {
      if (Date.now() > deadline) throw err
      await new Promise((r) => setTimeout(r, 20))
    } finally {
      client.close()
    }
  }
}

// ---- reading WatchResponse bytes without decoding them all ----

function varint(b: Buffer, pos: { i: number }): number {
  let result = 0
  let shift = 1
  for (;;) {
    const byte = b[pos.i++]
    result += (byte & 0x7f) * shift
    if (byte < 0x80) return result
    shift *= 128
  }
}

/** Calls fn(fieldNumber, wireType, start, end) for each field; for varints start is the value. */
function fields(b: Buffer, from: number, to: number, fn: (field: number, wire: number, start: number, end: number) => void): void {
  const pos = { i: from }
  while (pos.i < to) {
    const tag = varint(b, pos)
    const wire = tag & 7
    const field = tag >>> 3
    if (wire === 0) fn(field, 0, varint(b, pos), pos.i)
    else if (wire === 2) {
      const len = varint(b, pos)
      fn(field, 2, pos.i, pos.i + len)
      pos.i += len
    } else if (wire === 1) pos.i += 8
    else if (wire === 5) pos.i += 4
    else throw new Error(`wire type ${wire}`)
  }
}

export interface WatchResponseSummary {
  watchId: number
  created: boolean
  canceled: boolean
  events: number
}

/**
 * WatchResponse: watch_id 2, created 3, canceled 4, events 11; Event.kv 2; KeyValue.value 5.
 * `onValue`, if given, gets each event's value in order.
 */
export function readWatchResponse(b: Buffer, onValue?: (value: Buffer) => void): WatchResponseSummary {
  const s: WatchResponseSummary = { watchId: 0, created: false, canceled: false, events: 0 }
  fields(b, 0, b.length, (field, wire, start, end) => {
    if (field === 2 && wire === 0) s.watchId = start
    else if (field === 3 && wire === 0) s.created = start !== 0
    else if (field === 4 && wire === 0) s.canceled = start !== 0
    else if (field === 11 && wire === 2) {
      s.events++
      if (onValue === undefined) return
      fields(b, start, end, (f, w, kvStart, kvEnd) => {
        if (f !== 2 || w !== 2) return
        fields(b, kvStart, kvEnd, (vf, vw, vStart, vEnd) => {
          if (vf === 5 && vw === 2) onValue(b.subarray(vStart, vEnd))
        })
      })
    }
  })
  return s
}

export interface RangeResponseSummary {
  /** The header's revision. */
  revision: number
  kvs: number
  /** The last kv's key (a view into the response), where there are kvs. */
  lastKey?: Buffer
  more: boolean
  count: number
}

/** RangeResponse: header 1 (ResponseHeader.revision 3), kvs 2 (KeyValue.key 1), more 3, count 4. */
export function readRangeResponse(b: Buffer): RangeResponseSummary {
  const s: RangeResponseSummary = { revision: 0, kvs: 0, more: false, count: 0 }
  fields(b, 0, b.length, (field, wire, start, end) => {
    if (field === 1 && wire === 2) {
      fields(b, start, end, (f, w, value) => {
        if (f === 3 && w === 0) s.revision = value
      })
    } else if (field === 2 && wire === 2) {
      s.kvs++
      fields(b, start, end, (f, w, keyStart, keyEnd) => {
        if (f === 1 && w === 2) s.lastKey = b.subarray(keyStart, keyEnd)
      })
    } else if (field === 3 && wire === 0) s.more = start !== 0
    else if (field === 4 && wire === 0) s.count = start
  })
  return s
}
