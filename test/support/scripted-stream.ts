/**
 * A scripted JetStream stream for applier tests (log/jetstream/applier.ts) on a real copy: the quorum's
 * history the stream's leader answers look-ups from, and what each consumer the applier makes delivers.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { JetStreamClient, JetStreamManager } from 'nats'
import { Applier, type ApplierSettings } from '../../log/jetstream/applier.js'
import { encode, messageHash, type LogMessage } from '../../log/jetstream/messages.js'
import { ClusterMetrics } from '../../log/jetstream/metrics.js'
import { clusterNames } from '../../log/jetstream/options.js'
import { TailStore } from '../../log/jetstream/tail.js'
import { DEFAULT_LEVEL_LOG_OPTIONS } from '../../log/level/options.js'
import { levelReplicaStorage } from '../../log/level/replica-storage.js'
import type { Replica } from '../../log/replica.js'

/** A chain of solo meta messages after `prev`, each naming `tag` in its value. */
export function chain(count: number, tag: string, prev = ''): Buffer[] {
  const out: Buffer[] = []
  for (let i = 0; i < count; i++) {
    const m: LogMessage = {
      v: 1,
      ts: 1_000 + out.length,
      epoch: 1,
      prev,
      cmds: [{ rid: `${tag}.${i}`, cmd: { type: 'meta', name: 'note', value: `${tag}${i}` } }],
    }
    const bytes = encode(m)
    out.push(bytes)
    prev = messageHash(bytes)
  }
  return out
}

/**
 * What a scripted stream does: the quorum's history (1-based, what the leader answers) and, per consumer
 * made (the applier makes two at once and keeps the first), the messages it delivers from its start sequence.
 */
export interface Script {
  quorum: Buffer[]
  /** Look-ups at the leader that fail first (no leader, being elected). */
  unanswered?: number
  /** Consumers after this many made (in rounds of two) are refused, as while JetStream has no meta leader. */
  consumersAllowed?: number
  deliveries: Array<(from: number) => Array<{ seq: number; data: Buffer }>>
  /** Messages read from the leader so far (counted by the script). */
  reads?: number
}

export function scriptedStream(script: Script): { js: JetStreamClient; jsm: JetStreamManager; made: () => number } {
  let made = 0
  let added = 0
  const jsm = {
    consumers: {
      add: (_stream: string, cfg: { opt_start_seq: number }) =>
        script.consumersAllowed !== undefined && added++ >= 2 * script.consumersAllowed
          ? Promise.reject(new Error('TIMEOUT'))
          : Promise.resolve({ name: `c${made}`, cluster: { leader: `n${made}` }, from: cfg.opt_start_seq }),
      delete: () => Promise.resolve(true),
    },
    streams: {
      getMessage: (_stream: string, q: { seq: number }) => {
        if (script.unanswered !== undefined && script.unanswered > 0) {
          script.unanswered--
          return Promise.reject(new Error('503'))
        }
        script.reads = (script.reads ?? 0) + 1
        return q.seq >= 1 && q.seq <= script.quorum.length
          ? Promise.resolve({ seq: q.seq, data: script.quorum[q.seq - 1], header: undefined })
          : Promise.reject(Object.assign(new Error('no message found'), { api_error: { err_code: 10037 } }))
      },
    },
  }
  const js = {
    consumers: {
      get: (_stream: string, name: string) =>
        Promise.resolve({
          consume: () => {
            const from = (lastAdded as { from: number }).from
            // The applier makes two at once and keeps the first (applier.ts, consume()): both get one script.
            const list = (script.deliveries[Math.floor(made++ / 2)] ?? (() => []))(from)
            let closed = false
            let wake: () => void = () => undefined
            return Promise.resolve({
              name,
              close: () => {
                closed = true
                wake()
                return Promise.resolve()
              },
              async *[Symbol.asyncIterator]() {
                for (let i = 0; i < list.length && !closed; i++) {
                  yield { seq: list[i].seq, data: list[i].data, info: { deliverySequence: i + 1, pending: 0 }, headers: undefined }
                }
                // A live consumer that has nothing more: waits until closed.
                if (!closed) await new Promise<void>((r) => (wake = r))
              },
            })
          },
        }),
    },
  }
  let lastAdded: unknown
  const add = jsm.consumers.add
  jsm.consumers.add = (stream, cfg) => add(stream, cfg).then((info) => (lastAdded = info))
  return { js: js as unknown as JetStreamClient, jsm: jsm as unknown as JetStreamManager, made: () => Math.ceil(made / 2) }
}

export interface ScriptedApplier {
  applier: Applier
  metrics: ClusterMetrics
  /** Consumers made (rounds of two). */
  made: () => number
}

/**
 * Registers before/after hooks in the calling describe block: a fresh copy (LevelDB in a temp dir) per
 * test, and the applier started on it stopped after. `start` makes an applier on the scripted stream
 * (not started); `lines` holds what it logged.
 */
export function scriptedAppliers(): { start(script: Script, settings?: Partial<ApplierSettings>): ScriptedApplier; lines: string[] } {
  let dir = ''
  let view: Replica | undefined
  let applier: Applier | undefined
  const lines: string[] = []
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-applier-'))
    view = await levelReplicaStorage({ ...DEFAULT_LEVEL_LOG_OPTIONS, dir, compactionThread: false }).open(dir)
    lines.length = 0
  })
  afterEach(async () => {
    await applier?.stop()
    applier = undefined
    await view?.close()
    await rm(dir, { recursive: true, force: true })
  })
  return {
    lines,
    start(script, settings = {}) {
      const { js, jsm, made } = scriptedStream(script)
      const metrics = new ClusterMetrics()
      applier = new Applier(
        js,
        jsm,
        clusterNames('scripted'),
        view!,
        metrics,
        (line) => void lines.push(line),
        new TailStore(view!, 64),
        {
          durable: () => undefined,
          hashed: () => undefined,
          fill: () => Promise.reject(new Error('no fill in this test')),
          streamLast: () => Promise.resolve(script.quorum.length),
          room: () => Promise.resolve(),
        },
        { maxAhead: 16, holdMax: 1, stallTimeoutMs: 60_000, inactiveMs: 30_000, fillRetryMs: 50, confirmTimeoutMs: 1_000, ...settings },
      )
      return { applier, metrics, made }
    },
  }
}
