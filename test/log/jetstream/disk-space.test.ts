/**
 * A member whose copy's filesystem runs below clusterDiskReserve, with in-process members over three real
 * nats-servers and a real file taking the space (fallocate): the member stops applying the log and is not
 * caught up (so not ready) while the others go on acknowledging writes; once the file is deleted it
 * applies on by itself and is caught up again, with the same state as the others.
 */
import { expect } from 'chai'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, statfs } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { inProcessMembers } from '../../support/cluster-members.js'
import { waitFor } from '../../support/wait.js'

const GiB = 1024 * 1024 * 1024

describe('JetStreamLog: a member whose disk runs out of room', function () {
  this.timeout(120_000)
  const members = inProcessMembers('disk')
  let spaceDir = ''
  after(async () => {
    if (spaceDir !== '') await rm(spaceDir, { recursive: true, force: true })
  })

  it('stops applying and is not ready below the reserve, and applies on by itself once there is room', async () => {
    const a = await members.start('a')
    await waitFor('a to lead', () => a.isLeading, 30_000)
    const b = await members.start('b')
    spaceDir = await mkdtemp(join(tmpdir(), 'kvlog-js-disk-'))
    const fs = await statfs(spaceDir)
    // A reserve 1 GiB under what is free now: a 3 GiB file on the same filesystem puts the member below it.
    const c = await members.start('c', { clusterDiskReserve: fs.bavail * fs.bsize - GiB })
    await members.waitRoster([a, b, c])
    await a.put('k', 'v0')
    await waitFor('c to apply v0', () => c.view.revision === a.view.revision, 30_000)
    expect(await c.caughtUp()).to.equal(true)

    await promisify(execFile)('fallocate', ['-l', String(3 * GiB), join(spaceDir, 'fill')])
    let i = 0
    const deadline = Date.now() + 60_000
    // The member looks at its disk at most once a second: writes go on until one finds it full.
    while (c.view.revision === a.view.revision || (await c.caughtUp())) {
      await a.put('k', `v${++i}`)
      expect(Date.now(), 'c to stop applying').to.be.below(deadline)
      await new Promise((r) => setTimeout(r, 100))
    }
    await a.put('k', 'last')
    expect(await c.caughtUp(), 'c while its disk is below the reserve').to.equal(false)
    expect(c.disk.full, 'kvlog_cluster_disk_low while below the reserve').to.equal(true)
    expect((await c.range('k', { serializable: true })).kvs[0].value.toString()).to.not.equal('last')

    await rm(join(spaceDir, 'fill'))
    await waitFor('c to apply on', () => c.view.revision === a.view.revision, 30_000)
    const caughtUp = Date.now() + 30_000
    while (!(await c.caughtUp())) expect(Date.now(), 'c caught up again').to.be.below(caughtUp)
    expect((await c.range('k', { serializable: true })).kvs[0].value.toString()).to.equal('last')
    expect((await c.range('k')).kvs[0].value.toString()).to.equal('last')
    expect(c.disk.full, 'kvlog_cluster_disk_low once there is room').to.equal(false)
  })
})
