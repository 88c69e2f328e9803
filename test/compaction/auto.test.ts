/**
 * Automatic compaction against real `kvlog serve` processes (compaction/auto-compactor.ts, docs/api.md
 * "Automatic compaction", "Consumer cursors", "Alarms"): the revision and periodic policies, min retain,
 * the size quota and its NOSPACE alarm (raised, refusing puts only, cleared by hand, by compaction and by a
 * restart with a smaller min retain), consumer cursors holding the floor and expiring, watches resuming
 * from a cursor, and a backed-up watch falling below the floor while a live one carries on.
 *
 * Every server checks its policies every 100 ms, so the tests wait for a condition (polling), never for a
 * fixed time, except where they show that something does NOT happen over several checks.
 */
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { KVLOG_BIN, startServerProcess, type ServerProcess } from '../support/server-process.js'
import { eventRevisions, Http, ndjsonWatch, sleep, waitUntil, WsRecorder, type StatusJson, type WatchMsg } from './helpers.js'

const CHECK = ['--compaction-check-interval', '100ms']

/** Starts a server for the enclosing describe; `ctx.http` is its client. */
function useServer(args: string[]): { http: Http; server: ServerProcess } {
  const ctx = {} as { http: Http; server: ServerProcess }
  before(async () => {
    ctx.server = await startServerProcess([...CHECK, ...args])
    ctx.http = new Http(ctx.server.http)
  })
  afterEach(function () {
    if (this.currentTest?.state === 'failed') process.stderr.write(`server log:\n${ctx.server?.stderr()}\n`)
  })
  after(async () => {
    await ctx.server?.cleanup()
  })
  return ctx
}

async function floorOf(http: Http): Promise<number> {
  return (await http.status()).compactRevision
}

/**
 * Waits until the compact revision equals `want` (computed from each status) and that compaction is done
 * and counted: the floor rises when a compaction is scheduled, its removal and then the run's stats follow.
 */
function waitForFloor(http: Http, want: (status: StatusJson) => number, timeoutMs = 5000): Promise<StatusJson> {
  return waitUntil(
    async () => {
      const s = await http.status()
      const c = s.compaction
      return s.compactRevision === want(s) && c.inProgress === undefined && c.last?.floor === s.compactRevision ? s : undefined
    },
    timeoutMs,
    'the compact revision',
  )
}

async function expectCompactedRead(http: Http, revision: number, floor: number): Promise<void> {
  const r = await http.get(`/v1/kv?key=x&prefix=true&revision=${revision}`)
  expect(r.status, `read at ${revision}`).to.equal(410)
  expect(r.body.error.code).to.equal('COMPACTED')
  expect(r.body.error.details.compactRevision).to.equal(floor)
}

async function alarms(http: Http): Promise<string[]> {
  const r = await http.get('/v1/alarms')
  expect(r.status).to.equal(200)
  return r.body.alarms as string[]
}

const QUOTA = 1024 * 1024

/**
 * Puts 16 KiB values to 4 keys, 8 at a time, until puts are refused (507): the writes outrun the 100 ms
 * checks, so the database ends up well over the quota (and a later reclaim cannot get it under by chance),
 * while the live data (4 keys) stays far below it.
 */
async function fillUntilNoSpace(http: Http, prefix: string): Promise<void> {
  const value = 'q'.repeat(16 * 1024)
  let n = 0
  let refused = false
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (!refused && n < 5000) {
        const r = await http.put(`${prefix}${n % 4}`, `${value}${n++}`)
        if (r.status === 507) refused = true
        else expect(r.status).to.equal(200)
      }
    }),
  )
  expect(refused, 'puts were refused').to.equal(true)
}

describe('automatic compaction (real kvlog serve processes)', function () {
  this.timeout(60_000)

  describe('revision mode', () => {
    const ctx = useServer(['--auto-compaction-mode', 'revision', '--auto-compaction-retention', '50', '--compaction-min-retain', '10'])

    it('keeps the last N revisions: floor = current - N after a check, following the head', async () => {
      const { http } = ctx
      const head = await http.putMany('x/', 300)
      const s = await waitForFloor(http, () => head - 50)
      expect(s.revision).to.equal(head)
      await expectCompactedRead(http, head - 51, head - 50)
      expect((await http.get(`/v1/kv?key=x/&prefix=true&revision=${head - 50}`)).status).to.equal(200)
      expect(s.compaction.runs).to.be.at.least(1)
      expect(s.compaction.removedRevisionsTotal, 'every entry 2..floor-1 removed, once').to.equal(head - 50 - 2)
      expect(s.compaction.last?.floor).to.equal(head - 50)
      expect(s.compaction.inProgress).to.equal(undefined)
      // quiet: nothing more to do, the floor stays
      await sleep(350)
      expect(await floorOf(http)).to.equal(head - 50)
      const later = await http.putMany('x/', 120)
      await waitForFloor(http, () => later - 50)
    })
  })

  describe('min retain', () => {
    const ctx = useServer(['--auto-compaction-mode', 'revision', '--auto-compaction-retention', '5', '--compaction-min-retain', '40'])

    it('caps the policy: at least compactionMinRetain recent revisions stay', async () => {
      const head = await ctx.http.putMany('x/', 100)
      await waitForFloor(ctx.http, () => head - 40)
      await sleep(350)
      expect(await floorOf(ctx.http), 'not further than min retain').to.equal(head - 40)
    })
  })

  describe('periodic mode', () => {
    const ctx = useServer(['--auto-compaction-mode', 'periodic', '--auto-compaction-retention', '1s', '--compaction-min-retain', '0'])

    it('compacts what is older than the duration, and everything once all of it is', async () => {
      const { http } = ctx
      const old = await http.putMany('x/', 60)
      await sleep(1300)
      const first = await http.mustPut('x/new', '0')
      for (let i = 1; i < 10; i++) await http.mustPut('x/new', String(i))
      // within the second after `first`: the floor is the first revision inside the window
      const s = await waitForFloor(http, () => first, 900)
      expect(s.compactRevision).to.equal(first)
      await expectCompactedRead(http, old, first)
      expect((await http.get(`/v1/kv?key=x/&prefix=true&revision=${first}`)).status).to.equal(200)
      // once nothing is younger than a second, the floor goes to the head
      const head = first + 9
      await waitForFloor(http, () => head, 4000)
      const all = await http.get('/v1/history?key=x/&prefix=true')
      expect(all.status).to.equal(200)
      expect(all.body.events.map((e: { revision: number }) => e.revision)).to.deep.equal([head])
    })
  })

  describe('size quota and the NOSPACE alarm', () => {
    const args = ['--quota-backend-bytes', '1MiB']
    let dataDir = ''
    let server: ServerProcess | undefined
    before(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'kvlog-quota-'))
      // min retain far above what is written: compaction cannot get the database under the quota
      server = await startServerProcess([...CHECK, ...args, '--compaction-min-retain', '100000'], dataDir)
    })
    after(async () => {
      await server?.cleanup()
      await rm(dataDir, { recursive: true, force: true })
    })

    it('raises NOSPACE when compaction cannot get under the quota: puts get 507, reads and deletes work', async () => {
      const http = new Http(server!.http)
      expect(await alarms(http)).to.deep.equal([])
      await fillUntilNoSpace(http, 'q/')
      await waitUntil(async () => ((await alarms(http)).includes('NOSPACE') ? true : undefined), 3000, 'NOSPACE')
      const status = await http.status()
      expect(status.alarms).to.deep.equal(['NOSPACE'])
      expect(status.dbSize).to.be.greaterThan(QUOTA)

      const put = await http.put('q/0', 'more')
      expect(put.status).to.equal(507)
      expect(put.body.error.code).to.equal('NO_SPACE')
      const txnPut = await http.post('/v1/txn', { success: [{ type: 'put', key: 'q/new', value: 'v' }] })
      expect(txnPut.status).to.equal(507)
      expect(txnPut.body.error.code).to.equal('NO_SPACE')
      // a txn that only reads or deletes is fine
      const txnDel = await http.post('/v1/txn', {
        success: [
          { type: 'delete', key: 'q/2' },
          { type: 'range', key: 'q/1' },
        ],
      })
      expect(txnDel.status).to.equal(200)
      const get = await http.get('/v1/kv?key=q/&prefix=true&countOnly=true')
      expect(get.status).to.equal(200)
      const del = await http.del('/v1/kv?key=q/3')
      expect(del.status).to.equal(200)
      expect(del.body.deleted).to.equal(1)
      expect(del.body.header.revision, 'a delete still gets a revision').to.equal(get.body.header.revision + 1)
    })

    it('DELETE /v1/alarms/NOSPACE clears it by hand; still over the quota, the next check raises it again', async () => {
      const http = new Http(server!.http)
      const cleared = await http.del('/v1/alarms/NOSPACE')
      expect(cleared.status).to.equal(200)
      expect(cleared.body.alarms).to.deep.equal([])
      // Puts are accepted again until a check raises it again. Add enough that the data (all history is
      // kept) is clearly over the quota, however close to it the first alarm came (see fillUntilNoSpace).
      const value = 'm'.repeat(16 * 1024)
      for (let i = 0; i < 48; i++) {
        const r = await http.put(`q/${i % 4}`, value)
        if (r.status === 507) break
        expect(r.status).to.equal(200)
      }
      await waitUntil(async () => ((await alarms(http)).includes('NOSPACE') ? true : undefined), 3000, 'NOSPACE raised again')
      const unknown = await http.del('/v1/alarms/NOSUCH')
      expect(unknown.status).to.equal(404)
      expect(unknown.body.error.code).to.equal('NOT_FOUND')
    })

    it('clears itself once a manual compaction gets the database under the quota', async () => {
      const http = new Http(server!.http)
      const head = (await http.status()).revision
      const compact = await http.post('/v1/compact', { revision: head })
      expect(compact.status).to.equal(200)
      expect(compact.body.compactRevision).to.equal(head)
      const s = await waitUntil(
        async () => {
          const st = await http.status()
          return st.alarms.length === 0 ? st : undefined
        },
        5000,
        'the alarm to clear itself',
      )
      expect(s.dbSize).to.be.at.most(QUOTA)
      expect((await http.put('q/after', 'v')).status).to.equal(200)
    })

    it('clears itself after a restart with a smaller min retain (the alarm survives the restart until then)', async () => {
      let http = new Http(server!.http)
      await fillUntilNoSpace(http, 'r/')
      await waitUntil(async () => ((await alarms(http)).includes('NOSPACE') ? true : undefined), 3000, 'NOSPACE')
      const head = (await http.status()).revision
      expect(await server!.stop('SIGTERM')).to.equal(0)
      await server!.cleanup() // removes the ready file, keeps the data dir
      // checks every second here, so the first look comes before the first check
      server = await startServerProcess(['--compaction-check-interval', '1s', ...args, '--compaction-min-retain', '5'], dataDir)
      http = new Http(server.http)
      expect(await alarms(http), 'the alarm is durable').to.deep.equal(['NOSPACE'])
      expect((await http.put('r/0', 'v')).status).to.equal(507)
      const s = await waitUntil(
        async () => {
          const st = await http.status()
          return st.alarms.length === 0 ? st : undefined
        },
        5000,
        'the alarm to clear after the restart',
      )
      expect(s.revision).to.equal(head)
      expect(s.compactRevision, 'the quota compacted down to min retain').to.equal(head - 5)
      expect((await http.put('r/after', 'v')).status).to.equal(200)
    })
  })

  describe('consumer cursors', () => {
    // revision mode would keep 20; the cursor holds the floor back up to 150 revisions behind the head
    const ctx = useServer([
      '--auto-compaction-mode',
      'revision',
      '--auto-compaction-retention',
      '20',
      '--compaction-min-retain',
      '0',
      '--cursor-max-lag',
      '150',
    ])
    let c1 = 0

    it('a cursor holds the floor at its revision + 1 while revision mode would compact further', async () => {
      const { http } = ctx
      c1 = await http.putMany('c/', 30, { concurrency: 1 })
      const put = await http.request('PUT', '/v1/cursors/c1', { revision: c1 })
      expect(put.status).to.equal(200)
      expect(put.body.cursor).to.include({ name: 'c1', revision: c1, expired: false })
      const head = await http.putMany('c/', 100, { concurrency: 1 })
      await waitForFloor(http, () => c1 + 1)
      await sleep(400)
      expect(await floorOf(http), 'held over several checks').to.equal(c1 + 1)
      const list = await http.get('/v1/cursors')
      expect(list.body.cursors).to.have.length(1)
      expect(list.body.cursors[0]).to.include({ name: 'c1', revision: c1, expired: false, lag: head - c1 })
    })

    it('a watch from a cursor that has not expired resumes at cursor + 1 exactly (WebSocket and NDJSON)', async () => {
      const { http } = ctx
      const head = (await http.status()).revision
      const ws = await WsRecorder.connect(http.base)
      try {
        ws.create({ id: 1, key: 'c/', prefix: true, cursor: 'c1' })
        await ws.waitFor(() => eventRevisions(ws.of(1)).includes(head), 5000, 'the catch-up to the head')
        expect(ws.of(1)[0].type).to.equal('created')
        const revs = eventRevisions(ws.of(1))
        expect(revs, 'every revision from cursor + 1 to the head, in order').to.deep.equal(
          Array.from({ length: head - c1 }, (_, i) => c1 + 1 + i),
        )
      } finally {
        ws.close()
      }
      const nd = await ndjsonWatch(
        http.base,
        { key: 'c/', prefix: true, cursor: 'c1' },
        (lines) => eventRevisions(lines).includes(head),
        5000,
      )
      expect(nd.status).to.equal(200)
      expect(eventRevisions(nd.lines)[0]).to.equal(c1 + 1)
      expect(eventRevisions(nd.lines)).to.have.length(head - c1)
    })

    it('rejects commits below the floor, above the head, and bad names', async () => {
      const { http } = ctx
      const floor = await floorOf(http)
      const head = (await http.status()).revision
      const below = await http.request('PUT', '/v1/cursors/c2', { revision: floor - 2 })
      expect([below.status, below.body.error.code]).to.deep.equal([410, 'COMPACTED'])
      const future = await http.request('PUT', '/v1/cursors/c2', { revision: head + 1 })
      expect([future.status, future.body.error.code]).to.deep.equal([400, 'FUTURE_REVISION'])
      const bad = await http.request('PUT', '/v1/cursors/-bad', { revision: head })
      expect([bad.status, bad.body.error.code]).to.deep.equal([400, 'INVALID_ARGUMENT'])
      const missing = await http.del('/v1/cursors/nope')
      expect([missing.status, missing.body.error.code]).to.deep.equal([404, 'NOT_FOUND'])
      // a watch from an unknown cursor: an error line, no watch
      const nd = await ndjsonWatch(http.base, { key: 'c/', prefix: true, cursor: 'nope' }, (lines) => lines.length > 0, 3000)
      expect(nd.lines[0]).to.include({ type: 'error', code: 'NOT_FOUND' })
    })

    it('a cursor lagging beyond --cursor-max-lag expires, stops holding the floor, and its watches get COMPACTED', async () => {
      const { http } = ctx
      const head = await http.putMany('c/', 100, { concurrency: 4 })
      // lag now > 150: the next check expires it and revision mode compacts to head - 20
      const cursors = await waitUntil(
        async () => {
          const r = await http.get('/v1/cursors')
          return r.body.cursors[0]?.expired === true ? r.body.cursors : undefined
        },
        5000,
        'the cursor to expire',
      )
      expect(cursors[0]).to.include({ name: 'c1', revision: c1, expired: true })
      await waitForFloor(http, () => head - 20)
      const floor = head - 20

      const ws = await WsRecorder.connect(http.base)
      try {
        ws.create({ id: 7, key: 'c/', prefix: true, cursor: 'c1' })
        await ws.waitFor(() => ws.of(7).some((m) => m.type === 'canceled'), 5000, 'the cursor watch to be canceled')
        const msgs = ws.of(7)
        expect(msgs.map((m) => m.type)).to.deep.equal(['created', 'canceled'])
        expect(msgs[1]).to.include({ code: 'COMPACTED', compactRevision: floor })
      } finally {
        ws.close()
      }
      const nd = await ndjsonWatch(http.base, { key: 'c/', prefix: true, cursor: 'c1' }, () => false, 5000)
      expect(nd.ended, 'the NDJSON response ends after canceled').to.equal(true)
      expect(nd.lines.map((m) => m.type)).to.deep.equal(['created', 'canceled'])
      expect(nd.lines[1]).to.include({ code: 'COMPACTED', compactRevision: floor })

      // committing again revives it, and a watch from it works
      const recommit = await http.request('PUT', '/v1/cursors/c1', { revision: head - 3 })
      expect(recommit.status).to.equal(200)
      expect(recommit.body.cursor.expired).to.equal(false)
      const again = await ndjsonWatch(
        http.base,
        { key: 'c/', prefix: true, cursor: 'c1' },
        (lines) => eventRevisions(lines).includes(head),
        5000,
      )
      expect(eventRevisions(again.lines)).to.deep.equal([head - 2, head - 1, head])
      expect((await http.del('/v1/cursors/c1')).status).to.equal(200)
      expect((await http.get('/v1/cursors')).body.cursors).to.deep.equal([])
    })
  })

  describe('watchers below the new floor', () => {
    const ctx = useServer([
      '--auto-compaction-mode',
      'revision',
      '--auto-compaction-retention',
      '100',
      '--compaction-min-retain',
      '0',
      '--ws-max-buffered-bytes',
      '64KiB',
    ])

    it('a backed-up WebSocket watch falls below the floor and gets COMPACTED; a live watch carries on untouched', async () => {
      const { http } = ctx
      const slow = await WsRecorder.connect(http.base)
      const live = await WsRecorder.connect(http.base)
      try {
        slow.create({ id: 1, key: 'w/', prefix: true })
        live.create({ id: 1, key: 'w/', prefix: true })
        await slow.waitFor(() => slow.of(1).length > 0, 3000, 'created')
        await live.waitFor(() => live.of(1).length > 0, 3000, 'created')
        const start = (await http.status()).revision + 1
        slow.pause()
        // Big values until the server pauses the slow watch (kernel buffers fill first, then
        // wsMaxBufferedBytes). The live one may pause for a moment too, but drains within ~20 ms: a pause
        // that outlasts 100 ms without writes is the slow one.
        const big = 'b'.repeat(32 * 1024)
        let writes = 0
        await waitUntil(
          async () => {
            await Promise.all(Array.from({ length: 16 }, () => http.mustPut(`w/${writes++ % 4}`, big)))
            await sleep(100)
            return (await http.status()).watch.slowWatchers === 1 ? true : undefined
          },
          30_000,
          'the slow watch to pause',
          0,
        )
        // small writes: revision mode (keep 100) moves the floor past where the slow watch stopped
        const head = await http.putMany('w/', 150, { concurrency: 1 })
        await waitForFloor(http, () => head - 100)
        // the hub notices a paused watch below the floor on the next commit
        await http.mustPut('w/last', 'x')
        slow.resume()
        await slow.waitFor(() => slow.of(1).some((m) => m.type === 'canceled'), 10_000, 'COMPACTED for the slow watch')
        const slowMsgs = slow.of(1)
        const canceled = slowMsgs[slowMsgs.length - 1]
        expect(canceled).to.include({ type: 'canceled', code: 'COMPACTED' })
        const got = eventRevisions(slowMsgs)
        expect(got, 'the slow watch got a gapless prefix before the cancel').to.deep.equal(
          Array.from({ length: got.length }, (_, i) => start + i),
        )
        expect(canceled.compactRevision!, 'it really fell below the floor').to.be.greaterThan((got[got.length - 1] ?? start - 1) + 1)

        // the live watch: every revision, no cancel, and it keeps receiving
        const after = await http.mustPut('w/after', 'y')
        await live.waitFor(() => eventRevisions(live.of(1)).includes(after), 5000, 'the live watch to get the last write')
        expect(eventRevisions(live.of(1))).to.deep.equal(Array.from({ length: after - start + 1 }, (_, i) => start + i))
        expect(live.of(1).some((m: WatchMsg) => m.type === 'canceled')).to.equal(false)
      } finally {
        slow.close()
        live.close()
      }
    })
  })

  it('a bad --auto-compaction-retention for the mode stops `kvlog serve` with exit code 2', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kvlog-badret-'))
    try {
      for (const [mode, retention] of [
        ['revision', '1h'],
        ['periodic', '10x'],
      ]) {
        const code = await new Promise<number | null>((resolve) => {
          const child = spawn(
            process.execPath,
            [
              KVLOG_BIN,
              'serve',
              '--data-dir',
              join(dir, mode),
              '--listen-http',
              '127.0.0.1:0',
              '--auto-compaction-mode',
              mode,
              '--auto-compaction-retention',
              retention,
            ],
            { stdio: 'ignore' },
          )
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
          child.on('exit', (c) => {
            clearTimeout(timer)
            resolve(c)
          })
        })
        expect(code, `${mode} ${retention}`).to.equal(2)
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
