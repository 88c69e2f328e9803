/**
 * `fsync: always` means an acknowledged write is on disk: counted as fdatasync/fsync calls by a real
 * strace on a real `kvlog serve`. A crash test with SIGKILL cannot show this (the page cache survives the
 * process), so here every acknowledged write must come with a sync of the data dir's files.
 */
import { expect } from 'chai'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { traceSyncs } from '../../support/strace.js'

const WRITES = 40

async function put(server: ServerProcess, i: number): Promise<void> {
  const res = await fetch(`${server.http}/v1/kv`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key: `/synced/${i}`, value: `v${i}` }),
  })
  expect(res.status, await res.text()).to.equal(200)
}

/** The syncs of the data dir's files while WRITES writes are made one after the other, each acknowledged. */
async function syncsPerWrites(args: string[]): Promise<string[]> {
  const server = await startServerProcess(args)
  try {
    await put(server, -1)
    const trace = await traceSyncs(server.child.pid!)
    for (let i = 0; i < WRITES; i++) await put(server, i)
    return await trace.stop(server.dataDir)
  } finally {
    await server.cleanup()
  }
}

describe('kvlog serve: durable writes are synced (strace)', function () {
  this.timeout(120_000)

  it('syncs the log at least once per acknowledged write with fsync: always', async () => {
    const syncs = await syncsPerWrites(['--fsync', 'always'])
    // One after the other, no two writes share a group: each needs its own sync before its answer.
    expect(syncs.length, syncs.slice(0, 5).join('\n')).to.be.at.least(WRITES)
  })

  it('sees far fewer syncs with fsync: never (the count measures the write path)', async () => {
    const syncs = await syncsPerWrites(['--fsync', 'never'])
    expect(syncs.length, syncs.slice(0, 5).join('\n')).to.be.lessThan(WRITES / 4)
  })
})
