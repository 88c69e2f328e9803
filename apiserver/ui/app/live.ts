/**
 * Live mode: one WebSocket watch on every key (GET /v1/watch), from the head on. After a disconnect it
 * reconnects (backing off up to 5 s) and resumes from the last revision it saw + 1, so no event is missed
 * or repeated; if that revision was compacted meanwhile it starts again from the head and says so.
 * Logged in, the token rides on the upgrade as a subprotocol (session.ts).
 */
import type { HistoryEvent } from './api.js'
import { watchProtocols } from './session.js'

export interface LiveState {
  connected: boolean
  revision: number
  /** Set when a resume found its history compacted, and events were skipped. */
  gap?: boolean
  /** The code the server refused the watch with (PERMISSION_DENIED: the user may not read every key). */
  refused?: string
}

export class LiveWatch {
  private ws: WebSocket | undefined
  private next: number | undefined
  private closed = false
  private delay = 250
  private timer: ReturnType<typeof setTimeout> | undefined

  constructor(
    private readonly onEvents: (events: HistoryEvent[]) => void,
    private readonly onState: (s: LiveState) => void,
  ) {
    this.connect()
  }

  private connect(): void {
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/watch`
    const ws = new WebSocket(url, watchProtocols())
    this.ws = ws
    ws.onopen = () => {
      this.delay = 250
      ws.send(
        JSON.stringify({
          op: 'create',
          id: 1,
          key: '\u0000',
          fromKey: true,
          prevKv: true,
          progressNotify: true,
          ...(this.next !== undefined ? { startRevision: this.next } : {}),
        }),
      )
    }
    ws.onmessage = (m) => {
      const msg = JSON.parse(String(m.data)) as { type: string; revision?: number; events?: HistoryEvent[]; code?: string }
      if (msg.type === 'created' || msg.type === 'progress') {
        if (this.next === undefined && msg.revision !== undefined) this.next = msg.revision + 1
        this.onState({ connected: true, revision: msg.revision ?? 0 })
      } else if (msg.type === 'events' && msg.events) {
        this.next = (msg.revision ?? 0) + 1
        this.onEvents(msg.events)
        this.onState({ connected: true, revision: msg.revision ?? 0 })
      } else if ((msg.type === 'error' || msg.type === 'canceled') && msg.code === 'PERMISSION_DENIED') {
        // Retrying would be refused again: stay closed until the session changes (a new LiveWatch).
        this.closed = true
        this.onState({ connected: false, revision: 0, refused: msg.code })
        ws.close()
      } else if (msg.type === 'canceled' && msg.code === 'COMPACTED') {
        this.next = undefined
        this.onState({ connected: false, revision: 0, gap: true })
        ws.close()
      }
    }
    ws.onclose = () => {
      if (this.closed) return
      this.onState({ connected: false, revision: (this.next ?? 1) - 1 })
      this.timer = setTimeout(() => this.connect(), this.delay)
      this.delay = Math.min(this.delay * 2, 5000)
    }
    ws.onerror = () => ws.close()
  }

  close(): void {
    this.closed = true
    clearTimeout(this.timer)
    this.ws?.close()
  }
}
