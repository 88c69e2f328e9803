/**
 * The short soak (the long one is `npm run soak`): ~30 s of concurrent clients on the native, gRPC and
 * resource API doors, watches and compaction against a real server while every kind of fault is injected (SIGKILL,
 * SIGKILL during compaction and during a snapshot download, SIGTERM, SIGSTOP/SIGCONT, dropped
 * connections, NO_SPACE from a tiny quota); the run goes on until each kind happened. Auth is enabled:
 * four of the eight clients run as users with limited permissions on the native and gRPC doors (tokens that
 * end with every restart and after a second of idleness), the others as root (soak/auth.ts). The checker
 * must find no violation and no lost acknowledged write, and every operation the users' permissions deny
 * must be refused and never applied. Then the same recorded history, doctored in several ways, must be
 * caught: the checkers are sensitive on this very data.
 */
import { expect } from 'chai'
import type { OracleEvent } from '../apiserver/watch/checker.js'
import type { Received } from '../support/watch-client.js'
import { checkHistory } from './checker/index.js'
import { allowed, checkPermissions } from './soak/auth.js'
import { isWrite, type History } from './history.js'
import { FAULT_KINDS } from './soak/faults.js'
import { MAX_UNKNOWN_SHARE, runSoak, summarize, type SoakReport } from './soak/run.js'

const SEED = Number(process.env.KVLOG_TEST_SEED ?? 20261123)
const NO_FAULTS = { compactions: 0, injected: {}, noSpaceAnswers: 0, snapshotChunks: 0 }

describe('reliability: short soak (real server, every fault kind, history checker)', function () {
  this.timeout(300_000)
  let report: SoakReport
  let history: History

  before(async function () {
    this.timeout(300_000)
    ;({ report, history } = await runSoak({
      durationSeconds: 30,
      seed: SEED,
      clients: 8,
      faultEveryMs: [300, 700],
      everyFault: true,
      auth: true,
    }))
    console.log(`      ${JSON.stringify({ ...report, violationSamples: report.violationSamples.slice(0, 5) })}`)
  })

  it('finds no violation and loses no acknowledged write', () => {
    expect(report.violationSamples, `seed ${SEED}`).to.deep.equal([])
    expect(report.violations).to.equal(0)
    expect(report.ackedWritesLost).to.equal(0)
    expect(report.failedButApplied).to.equal(0)
  })

  it('really exercised the server: operations, watch events, restarts, compactions, NO_SPACE, every fault kind', () => {
    expect(report.operations).to.be.greaterThan(500)
    expect(report.operationsByDoor.native ?? 0, 'native').to.be.greaterThan(100)
    expect(report.operationsByDoor.grpc ?? 0, 'grpc').to.be.greaterThan(100)
    expect(report.operationsByDoor.resources ?? 0, 'resources').to.be.greaterThan(100)
    expect(report.ackedWrites).to.be.greaterThan(150)
    expect(report.watchEvents).to.be.greaterThan(1000)
    expect(report.restarts).to.be.at.least(4)
    expect(report.compactions).to.be.at.least(1)
    expect(report.noSpaceAnswers + (report.errorCodes.NO_SPACE ?? 0)).to.be.at.least(1)
    expect(report.watchSegments).to.be.greaterThan(report.logicalWatches)
    for (const kind of FAULT_KINDS) expect(report.faultsInjected[kind] ?? 0, kind).to.be.at.least(1)
  })

  it('with auth: denied operations are refused with PERMISSION_DENIED and never applied, across restarts and token ends', () => {
    const auth = report.auth!
    expect(auth.violations).to.deep.equal([])
    expect(Object.values(auth.users).sort()).to.deep.equal(['reader', 'reader', 'writer', 'writer'])
    expect(auth.deniedAnswers.PERMISSION_DENIED ?? 0).to.be.greaterThan(20)
    expect(auth.deniedAnswers.ok ?? 0).to.equal(0)
    expect(auth.unauthenticated, 'an ended token surfaced instead of a new login').to.equal(0)
    // Auth state came back after the restarts; the users' clients logged in again and went on.
    expect(auth.deniedAfterFirstRestart).to.be.greaterThan(0)
    expect(auth.okAfterFirstRestart).to.be.greaterThan(20)
    // Each client logs in once, then once more after every restart or idle second that ended its token.
    expect(auth.logins.native, 'native logins').to.be.at.least(6)
    expect(auth.logins.grpc, 'gRPC logins').to.be.at.least(6)
  })

  it('catches a denied operation answered ok, and an allowed one answered PERMISSION_DENIED', () => {
    const auth = report.auth!
    const i = history.ops.findIndex((o) => o.code === 'PERMISSION_DENIED')
    const j = history.ops.findIndex((o) => o.outcome === 'ok' && auth.users[o.client] !== undefined && allowed(auth.users[o.client], o.op))
    const ops = [...history.ops]
    ops[i] = { ...ops[i], outcome: 'ok', code: undefined }
    ops[j] = { ...ops[j], outcome: 'fail', code: 'PERMISSION_DENIED' }
    const doctored = checkPermissions(ops, auth.users, history.oracle.events, history.recoveries, auth.logins)
    expect(doctored.violations).to.have.length(2)
  })

  it('catches a denied write that was applied', () => {
    const auth = report.auth!
    const denied = history.ops.find((o) => o.code === 'PERMISSION_DENIED' && o.op.type === 'put')!
    const op = denied.op as { keyBase64: string; valueBase64: string }
    const applied = {
      type: 'PUT' as const,
      revision: (history.finalRevision ?? 0) + 1,
      kv: { keyBase64: op.keyBase64, valueBase64: op.valueBase64, createRevision: 0, modRevision: 0, version: 1 },
    }
    const doctored = checkPermissions(history.ops, auth.users, [...history.oracle.events, applied], history.recoveries, auth.logins)
    expect(doctored.violations.join('\n')).to.include('yet applied')
  })

  it('catches an acknowledged write removed from the recorded log', () => {
    const put = history.ops.find((o) => o.outcome === 'ok' && o.op.type === 'put' && o.result!.revision > history.oracle.first)!
    const events = history.oracle.events.filter((e: OracleEvent) => e.revision !== put.result!.revision)
    const doctored = checkHistory({ ...history, oracle: { ...history.oracle, events } })
    expect(doctored.byKind).to.have.property('durability')
    expect(doctored.stats.ackedWritesLost).to.be.at.least(1)
  })

  it('catches a read whose answer was changed', () => {
    const i = history.ops.findIndex((o) => o.outcome === 'ok' && o.op.type === 'range' && (o.result!.kvs?.length ?? 0) > 0)
    const ops = [...history.ops]
    ops[i] = { ...ops[i], result: { ...ops[i].result!, kvs: ops[i].result!.kvs!.slice(1) } }
    expect(checkHistory({ ...history, ops }).byKind).to.have.property('linearizable')
  })

  it('catches a watch event message that went missing', () => {
    const w = history.watches.find((l) =>
      l.segments.some((s) => s.messages.filter((m) => (m as Received).msg.type === 'events').length > 3),
    )!
    const segments = w.segments.map((s) => {
      const i = s.messages.findIndex((m) => (m as Received).msg.type === 'events')
      return i < 0 ? s : { ...s, messages: s.messages.filter((_, j) => j !== i) }
    })
    const watches = history.watches.map((l) => (l === w ? { ...l, segments } : l))
    // A gap: [reliable], or [bookmarkable] when a later progress notice vouched for the missing revision.
    expect(Object.keys(checkHistory({ ...history, watches }).byKind)).to.include.oneOf(['reliable', 'bookmarkable'])
  })

  it('bounds the share of writes with an unknown outcome', () => {
    expect(report.unknownOutcomes.maxShare).to.equal(MAX_UNKNOWN_SHARE)
    expect(report.unknownOutcomes.share).to.be.at.most(MAX_UNKNOWN_SHARE)
    // The same run with most of its writes' answers lost fails on the bound.
    const writes = history.ops.filter((o) => isWrite(o.op))
    const lost = new Set(writes.slice(0, Math.ceil(writes.length * (MAX_UNKNOWN_SHARE + 0.1))))
    const ops = history.ops.map((o) => (lost.has(o) ? { ...o, outcome: 'unknown' as const, result: undefined } : o))
    const doctored = summarize({ seed: SEED }, { ...history, ops }, checkHistory({ ...history, ops }), NO_FAULTS, 0, [], 1)
    expect(doctored.unknownOutcomes.share).to.be.greaterThan(MAX_UNKNOWN_SHARE)
    expect(doctored.violationsByKind).to.have.property('outcome')
  })

  it('catches a resource write answered as failed that was applied', () => {
    const i = history.ops.findIndex((o) => o.outcome === 'ok' && o.op.type === 'object' && o.op.verb !== 'delete')
    const ops = [...history.ops]
    ops[i] = { ...ops[i], outcome: 'fail', code: 'Conflict' }
    expect(checkHistory({ ...history, ops }).stats.failedButApplied).to.equal(1)
  })

  it('catches a resource watch event whose object was changed', () => {
    const w = history.watches.find(
      (l) => l.spec.objectView && l.segments.some((s) => s.messages.some((m) => (m as Received).msg.type === 'events')),
    )!
    const segments = w.segments.map((s) => ({
      ...s,
      messages: s.messages.map((m) => {
        const r = m as Received
        if (r.msg.type !== 'events' || r.msg.events![0].type !== 'PUT') return r
        const e = r.msg.events![0]
        const valueBase64 = Buffer.from(Buffer.from(e.kv.valueBase64!, 'base64').toString('utf8').replace('"data"', '"Data"')).toString(
          'base64',
        )
        return { ...r, msg: { ...r.msg, events: [{ ...e, kv: { ...e.kv, valueBase64 } }] } }
      }),
    }))
    const watches = history.watches.map((l) => (l === w ? { ...l, segments } : l))
    expect(checkHistory({ ...history, watches }).byKind).to.have.property('createFlag')
  })
})
