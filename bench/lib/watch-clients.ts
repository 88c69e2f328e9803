/**
 * A child process holding WebSocket watch connections for the watch benchmark, so the load generator
 * does not share the parent's event loop. Started by bench/watch.bench.ts with IPC:
 *   parent → { cmd: 'watch', url, connections, watchersPerConnection, prefix, startRevision?, until? }
 *   child  → { kind: 'ready' } once every watch is created, then on { cmd: 'report' }:
 *            { kind: 'report', events, messages, latencies (a LatencySample: one per event), lastRevisionMin, doneAt? }
 * Values written by the benchmark are JSON {"t": send time in ms since the epoch}; latency = receipt - t.
 */
import WebSocket from 'ws'
import { Reservoir } from './latency-sample.js'

interface WatchCommand {
  cmd: 'watch'
  url: string
  connections: number
  watchersPerConnection: number
  prefix: string
  startRevision?: number
  /** Report `doneAt` once every watcher has seen this revision. */
  until?: number
}

const now = () => performance.timeOrigin + performance.now()
let events = 0
let messages = 0
const latencies = new Reservoir()
let lastRevision: number[] = []
let doneAt: number | undefined
let until: number | undefined

const HEAD = /^\{"type":"events","id":(\d+),"revision":(\d+),"events":/
const SENT = /"value":"\{\\"t\\":([0-9.]+)\}"/g

/**
 * Reads an events frame without a full JSON.parse (the generator must stay cheaper than the server):
 * id and revision from the fixed prefix, events counted by their type tags, a latency offered per stamped event.
 */
function onEvents(base: number, text: string): void {
  const head = HEAD.exec(text)
  if (head === null) return
  messages++
  let n = 0
  for (let i = text.indexOf('{"type":"', 10); i !== -1; i = text.indexOf('{"type":"', i + 9)) n++
  events += n
  const revision = Number(head[2])
  lastRevision[base + Number(head[1]) - 1] = revision
  SENT.lastIndex = 0
  for (let sent = SENT.exec(text); sent !== null; sent = SENT.exec(text)) {
    const slot = latencies.offer()
    if (slot >= 0) latencies.fill(slot, now() - Number(sent[1]))
  }
  if (until !== undefined && doneAt === undefined && revision >= until && lastRevision.every((r) => r >= until!)) {
    doneAt = now()
  }
}

async function watch(c: WatchCommand): Promise<void> {
  until = c.until
  const total = c.connections * c.watchersPerConnection
  lastRevision = new Array(total).fill(0)
  await Promise.all(
    Array.from(
      { length: c.connections },
      (_, conn) =>
        new Promise<void>((resolve, reject) => {
          let created = 0
          const ws = new WebSocket(c.url.replace(/^http/, 'ws') + '/v1/watch', { perMessageDeflate: false })
          ws.on('error', reject)
          ws.on('open', () => {
            for (let w = 0; w < c.watchersPerConnection; w++) {
              const create: Record<string, unknown> = { op: 'create', id: w + 1, key: c.prefix, prefix: true }
              if (c.startRevision !== undefined) create.startRevision = c.startRevision
              ws.send(JSON.stringify(create))
            }
          })
          ws.on('message', (data: Buffer) => {
            const text = data.toString()
            if (text.startsWith('{"type":"created"')) {
              if (++created === c.watchersPerConnection) resolve()
              return
            }
            if (text.startsWith('{"type":"events"')) onEvents(conn * c.watchersPerConnection, text)
          })
        }),
    ),
  )
  process.send!({ kind: 'ready' })
}

process.on('message', (m: WatchCommand | { cmd: 'report' } | { cmd: 'exit' }) => {
  if (m.cmd === 'watch')
    void watch(m).catch((err) => {
      process.send!({ kind: 'error', message: String(err) })
    })
  else if (m.cmd === 'report') {
    process.send!({ kind: 'report', events, messages, latencies: latencies.snapshot(), lastRevisionMin: Math.min(...lastRevision), doneAt })
  } else process.exit(0)
})
