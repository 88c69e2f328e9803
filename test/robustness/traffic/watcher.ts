/**
 * A recorded watch, as a kube-apiserver reflector keeps one: a Watch stream with one watch; every response
 * after the created one is kept (watch/check.ts WatchStream). When the stream breaks (a fault, a restart)
 * it is opened again from the revision after the last one it reached: an exact resume, recorded as a new
 * stream. A resume canceled for compaction ends the watch (the reflector would relist).
 */
import type { EtcdGrpc } from '../../support/etcd-grpc.js'
import type { WatchRequest, WatchStream } from '../watch/check.js'
import { eventOf } from './client.js'

type Msg = Record<string, unknown>

export interface WatchOptions {
  progressNotify?: boolean
  /** Ask for progress this often (RequestProgress), 0: never. */
  progressEveryMs?: number
}

export class RecordedWatch {
  /** The revision every event up to which this watch has seen (events or progress). */
  reached: number
  ended = false
  private stream: ReturnType<EtcdGrpc['stream']> | undefined
  private timer: NodeJS.Timeout | undefined
  private resumeTimer: NodeJS.Timeout | undefined
  private streams = 0

  constructor(
    private readonly g: EtcdGrpc,
    private readonly name: string,
    private readonly request: WatchRequest,
    private readonly out: WatchStream[],
    private readonly o: WatchOptions = {},
  ) {
    this.reached = request.startRevision - 1
    this.open(request.startRevision)
  }

  private open(startRevision: number): void {
    const record: WatchStream = { id: `${this.name}#${this.streams++}`, request: { ...this.request, startRevision }, responses: [] }
    this.out.push(record)
    const stream = this.g.stream('Watch', 'Watch')
    this.stream = stream
    let created = false
    stream.on('data', (m: Msg) => {
      if (!created && m.created === true) {
        created = true
        if (m.canceled !== true) return
      }
      const events = ((m.events as Msg[]) ?? []).map(eventOf)
      const compactRevision = Number(m.compact_revision ?? 0)
      const revision = Number((m.header as Msg | undefined)?.revision ?? 0)
      record.responses.push({ revision, events, ...(compactRevision > 0 ? { compactRevision } : {}) })
      if (m.canceled === true) {
        this.end()
        return
      }
      for (const e of events) this.reached = Math.max(this.reached, e.kv.mod)
      if (events.length === 0) this.reached = Math.max(this.reached, revision)
    })
    const broken = () => {
      if (this.stream !== stream || this.ended) return
      this.stream = undefined
      this.resumeTimer = setTimeout(() => !this.ended && this.open(this.reached + 1), 50)
    }
    stream.on('error', broken)
    stream.on('end', broken)
    const r = this.request
    stream.write({
      create_request: {
        key: Buffer.from(r.key, 'latin1'),
        ...(r.end !== undefined ? { range_end: Buffer.from(r.end, 'latin1') } : {}),
        start_revision: startRevision,
        prev_kv: r.prevKv === true,
        progress_notify: this.o.progressNotify === true,
        filters: [...(r.noPut ? ['Noput'] : []), ...(r.noDelete ? ['Nodelete'] : [])],
      },
    })
    if (this.o.progressEveryMs && this.timer === undefined) {
      this.timer = setInterval(() => this.stream?.write({ progress_request: {} }), this.o.progressEveryMs)
    }
  }

  requestProgress(): void {
    this.stream?.write({ progress_request: {} })
  }

  end(): void {
    this.ended = true
    clearInterval(this.timer)
    clearTimeout(this.resumeTimer)
    this.stream?.cancel()
    this.stream = undefined
  }
}
