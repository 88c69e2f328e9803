/**
 * log/level/read-views.ts: released() resolves once every view older than the current one at the call
 * has been released, whatever happens to views taken after it; at once when no reader holds an old one.
 */
import { expect } from 'chai'
import { ClassicLevel } from '../../../log/level/classic-level.js'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Db } from '../../../log/level/latest-view.js'
import { ReadViews } from '../../../log/level/read-views.js'

/** Whether `p` has settled after the pending callbacks have run. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false
  void p.then(() => (done = true))
  await new Promise((r) => setImmediate(r))
  return done
}

describe('log/level/read-views: released()', function () {
  let dir = ''
  let db: Db

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-read-views-'))
    db = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' })
    await db.open()
  })
  afterEach(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('resolves at once when no reader holds an older view, even while the current one is held', async () => {
    const views = new ReadViews(db, 1)
    views.advance(2)
    const current = views.acquire()
    expect(await settled(views.released())).to.equal(true)
    views.release(current)
    await views.closeAll()
  })

  it('waits for the older views held at the call, not for views taken after it', async () => {
    const views = new ReadViews(db, 1)
    const a = views.acquire()
    views.advance(2)
    const b = views.acquire()
    views.advance(3)
    const waiting = views.released()
    const c = views.acquire()
    views.advance(4)
    expect(await settled(waiting)).to.equal(false)
    views.release(b)
    expect(await settled(waiting), 'a is still held').to.equal(false)
    views.release(a)
    expect(await settled(waiting), 'c was taken after the call').to.equal(true)
    expect(await settled(views.released()), 'c is older now, and held').to.equal(false)
    views.release(c)
    await views.closeAll()
  })
})
