/**
 * The soak's clients: each one a sequence of random operations over a small key space (so keys collide,
 * CAS fails, ranges see each other's writes), every one recorded with its real-time start and end.
 * Clients on a door with leases (gRPC) also put keys under short leases that expire or are revoked.
 * Every put carries a value no other operation uses, so the checker can tell from the log whether a
 * write with an unknown outcome was applied, and that nothing was applied twice.
 */
import { performance } from 'node:perf_hooks'
import { sleep } from '../../support/watch-client.js'
import type { Driver } from '../drivers/types.js'
import type { KeySelection, Operation, OpRecord, OpResult, TxnOp } from '../history.js'

export const PREFIXES = ['/a/', '/b/', '/c/']
/** 8 keys per prefix; one more per prefix that is not valid UTF-8. */
export const KEYS: Buffer[] = PREFIXES.flatMap((p) => [
  ...Array.from({ length: 8 }, (_, i) => Buffer.from(`${p}k${i}`)),
  Buffer.concat([Buffer.from(p), Buffer.from([0xff, 0xfe])]),
])

const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64')

export class Recorder {
  readonly ops: OpRecord[] = []
  private nextId = 1

  /** Runs `op` on `driver` and records it; returns the record (outcome, result). */
  async run(client: string, driver: Driver, op: Operation): Promise<OpRecord> {
    const start = performance.now()
    let result: OpResult | undefined
    let failure: { outcome: 'fail' | 'unknown'; code: string } | undefined
    try {
      result = await driver.execute(op)
    } catch (err) {
      failure = driver.classify(err)
    }
    const rec: OpRecord = {
      id: this.nextId++,
      client,
      door: driver.door,
      start,
      end: performance.now(),
      op,
      outcome: failure?.outcome ?? 'ok',
    }
    if (failure !== undefined) rec.code = failure.code
    if (result !== undefined) rec.result = result
    this.ops.push(rec)
    return rec
  }
}

export interface WorkloadContext {
  recorder: Recorder
  /** The highest revision any client has seen (for reads at a past revision). */
  seen: { revision: number }
  floor(): number
  stopped(): boolean
}

/**
 * One client: random puts, deletes, CAS and multi-key txns, reads at the head and in the past. `idleMs`:
 * every 3-6 s it stays idle this long (past a token's TTL, with auth).
 */
export async function runClient(name: string, driver: Driver, rnd: () => number, ctx: WorkloadContext, idleMs = 0): Promise<void> {
  let i = 0
  const key = () => KEYS[Math.floor(rnd() * KEYS.length)]
  const value = () => {
    i++
    const tag = `${name}.${i}`
    // A tenth of the values are not UTF-8 (they travel as base64); all are unique.
    return rnd() < 0.1
      ? b64(Buffer.concat([Buffer.from([0xc3, 0x28]), Buffer.from(tag)]))
      : b64(`${tag}-${'x'.repeat(Math.floor(rnd() * 64))}`)
  }
  const run = async (op: Operation) => {
    const rec = await ctx.recorder.run(name, driver, op)
    if (rec.result !== undefined) ctx.seen.revision = Math.max(ctx.seen.revision, rec.result.revision)
    if (rec.outcome !== 'ok') await sleep(20 + rnd() * 60)
    return rec
  }
  let idleAt = idleMs > 0 ? performance.now() + 3000 + rnd() * 3000 : Infinity
  while (!ctx.stopped()) {
    if (idleMs > 0 && performance.now() >= idleAt) {
      await sleep(idleMs)
      idleAt = performance.now() + 3000 + rnd() * 3000
    }
    const choice = rnd()
    if (choice < 0.3) {
      await run({ type: 'put', keyBase64: b64(key()), valueBase64: value() })
    } else if (choice < 0.38) {
      await run({ type: 'delete', sel: { keyBase64: b64(key()) } })
    } else if (choice < 0.4) {
      const p = PREFIXES[Math.floor(rnd() * PREFIXES.length)]
      const a = Math.floor(rnd() * 6)
      await run({ type: 'delete', sel: { keyBase64: b64(`${p}k${a}`), rangeEndBase64: b64(`${p}k${a + 3}`) } })
    } else if (choice < 0.6) {
      // Compare-and-swap, as kube-apiserver updates: read, then write if nothing changed meanwhile.
      const k = b64(key())
      const read = await run({ type: 'range', sel: { keyBase64: k } })
      const mod = read.result?.kvs?.[0]?.modRevision ?? 0
      await run({
        type: 'txn',
        compare: [{ keyBase64: k, target: 'MOD', result: 'EQUAL', value: mod }],
        success: [{ type: 'put', keyBase64: k, valueBase64: value() }],
        failure: [{ type: 'range', sel: { keyBase64: k } }],
      })
    } else if (choice < 0.75) {
      await run(multiKeyTxn(rnd, key, value))
    } else if (choice < 0.8) {
      const k = b64(key())
      const target = rnd() < 0.5 ? 'VERSION' : 'CREATE'
      await run({
        type: 'txn',
        compare: [{ keyBase64: k, target, result: rnd() < 0.5 ? 'GREATER' : 'LESS', value: Math.floor(rnd() * 4) }],
        success: [
          { type: 'delete', sel: { keyBase64: k } },
          { type: 'range', sel: prefixOf(k) },
        ],
        failure: [{ type: 'put', keyBase64: k, valueBase64: value() }],
      })
    } else if (choice < 0.84 && driver.supports('leaseGrant')) {
      // A short lease on a key: it expires (or is revoked) and the key goes with it.
      const grant = await run({ type: 'leaseGrant', ttlSeconds: 1 + Math.floor(rnd() * 3) })
      const lease = grant.result?.lease
      if (lease === undefined) continue
      await run({ type: 'put', keyBase64: b64(key()), valueBase64: value(), lease })
      if (rnd() < 0.3) await run({ type: 'leaseRevoke', lease })
    } else {
      const past = rnd() < 0.25 && ctx.seen.revision > ctx.floor() + 1
      const sel: KeySelection = rnd() < 0.5 ? { keyBase64: b64(key()) } : prefixOf(b64(key()))
      const revision = past ? ctx.floor() + 1 + Math.floor(rnd() * (ctx.seen.revision - ctx.floor())) : undefined
      await run({ type: 'range', sel, ...(revision !== undefined ? { revision } : {}) })
    }
  }
}

function prefixOf(keyBase64: string): KeySelection {
  const key = Buffer.from(keyBase64, 'base64')
  return { keyBase64: b64(key.subarray(0, 3)), prefix: true }
}

/** 2–3 distinct keys, each put or deleted, in one revision. */
function multiKeyTxn(rnd: () => number, key: () => Buffer, value: () => string): Operation {
  const keys = new Set<string>()
  const want = 2 + Math.floor(rnd() * 2)
  while (keys.size < want) keys.add(b64(key()))
  const success: TxnOp[] = [...keys].map((k) =>
    rnd() < 0.75 ? { type: 'put', keyBase64: k, valueBase64: value() } : { type: 'delete', sel: { keyBase64: k } },
  )
  return { type: 'txn', compare: [], success, failure: [] }
}

/**
 * Fills the database with large values until the quota's NO_SPACE alarm answers (or `max` puts), then
 * deletes them again. Returns how many NO_SPACE answers it saw.
 */
export async function fillToQuota(driver: Driver, ctx: WorkloadContext, max = 80, valueBytes = 32 * 1024): Promise<number> {
  let noSpace = 0
  for (let n = 0; n < max && !ctx.stopped(); n++) {
    const tag = `fill.${performance.now().toFixed(3)}.${n}`
    const rec = await ctx.recorder.run('filler', driver, {
      type: 'put',
      keyBase64: b64(`/fill/${n % 40}`),
      valueBase64: b64(tag.padEnd(valueBytes, '.')),
    })
    if (rec.code === 'NO_SPACE') {
      noSpace++
      break
    }
  }
  await ctx.recorder.run('filler', driver, { type: 'delete', sel: { keyBase64: b64('/fill/'), prefix: true } })
  return noSpace
}
