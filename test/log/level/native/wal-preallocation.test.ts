/**
 * LevelDB's write-ahead log allocated ahead of its writes (leveldbWalPreallocateBytes; the env in
 * log/level/native/wal_preallocation.h, asked for by leveldbOptions): allocated while the store is open with fsync
 * 'always', cut back to what was written on close, appended as LevelDB does otherwise, and a store killed
 * with a zeroed tail in its log reopens with every acknowledged write (crash.test.ts does this at random
 * moments over many cycles; this is the deterministic case).
 */
import { expect } from 'chai'
import { ClassicLevel } from '../../../../log/level/classic-level.js'
import { spawn } from 'node:child_process'
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { leveldbOptions, openLevelLog } from '../../../../log/level/level-log.js'
import { DEFAULT_LEVEL_LOG_OPTIONS } from '../../../../log/level/options.js'
import type { LevelLogSettings } from '../../../../log/level/options.js'

const MiB = 1024 * 1024

/** Sizes of LevelDB's write-ahead log files (NNNNNN.log) in `dir`. */
async function logSizes(dir: string): Promise<number[]> {
  const names = (await readdir(dir)).filter((f) => /^\d+\.log$/.test(f))
  return Promise.all(names.map(async (f) => (await stat(join(dir, f))).size))
}

/** Opens a store with `settings`, puts 100 small values; the log sizes while open and after close. */
async function sizesAround(dir: string, settings: Partial<LevelLogSettings>): Promise<{ open: number[]; closed: number[] }> {
  const log = await openLevelLog({ dir, deferFileDeletes: false, ...settings })
  let open: number[]
  try {
    for (let i = 0; i < 100; i++) await log.put(`/k/${i}`, Buffer.alloc(100, 'v'))
    open = await logSizes(dir)
  } finally {
    await log.close()
  }
  return { open, closed: await logSizes(dir) }
}

describe('log/level/native WAL preallocation', function () {
  this.timeout(30_000)
  let dir = ''
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-wal-preallocation-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('the installed addon is the one built with the preallocating env', () => {
    // 0 for classic-level's prebuilt addon: the install did not build it (log/level/native/build-addon.mjs).
    expect((ClassicLevel as unknown as { kvlogPatchLevel: number }).kvlogPatchLevel).to.equal(4)
  })

  it('asks LevelDB for preallocation only when every write is synced', () => {
    const o = { ...DEFAULT_LEVEL_LOG_OPTIONS, leveldbWalPreallocateBytes: 3 * MiB }
    expect(leveldbOptions({ ...o, fsync: 'always' }).walPreallocateBytes).to.equal(3 * MiB)
    expect(leveldbOptions({ ...o, fsync: 'never' }).walPreallocateBytes).to.equal(0)
    expect(DEFAULT_LEVEL_LOG_OPTIONS.leveldbWalPreallocateBytes).to.equal(4 * MiB)
  })

  it('allocates the log a chunk ahead while open and cuts it back to its records on close', async () => {
    const { open, closed } = await sizesAround(dir, { fsync: 'always', leveldbWalPreallocateBytes: 2 * MiB })
    expect(open).to.have.lengthOf(1)
    expect(open[0]).to.equal(2 * MiB)
    expect(closed).to.have.lengthOf(1)
    // 100 records of ~150 bytes each, and nothing of the allocated tail.
    expect(closed[0]).to.be.within(100 * 100, 64 * 1024)
  })

  it('grows by further chunks once the writes pass the first', async () => {
    const log = await openLevelLog({ dir, deferFileDeletes: false, leveldbWalPreallocateBytes: 256 * 1024 })
    try {
      const value = Buffer.alloc(8192, 'v')
      for (let i = 0; i < 40; i++) await log.put(`/k/${i}`, value)
      const [size] = await logSizes(dir)
      expect(size % (256 * 1024)).to.equal(0)
      expect(size).to.be.at.least(2 * 256 * 1024)
    } finally {
      await log.close()
    }
  })

  it('appends as LevelDB does with fsync never, or at 0', async () => {
    for (const settings of [{ fsync: 'never' as const }, { fsync: 'always' as const, leveldbWalPreallocateBytes: 0 }]) {
      const sub = join(dir, String(settings.fsync) + String(settings.leveldbWalPreallocateBytes ?? ''))
      const { open, closed } = await sizesAround(sub, settings)
      expect(open[0]).to.be.below(64 * 1024)
      expect(open).to.deep.equal(closed)
    }
  })

  it('a store killed with a zeroed tail in its log reopens with every acknowledged write', async () => {
    // The child acknowledges 200 synced puts, then is killed: its log is still allocated ahead.
    const script = `
      const { openLevelLog } = await import(${JSON.stringify(new URL('../../../../log/level/level-log.js', import.meta.url).href)})
      const log = await openLevelLog({ dir: ${JSON.stringify(dir)}, deferFileDeletes: false })
      let revision = 0
      for (let i = 0; i < 200; i++) revision = (await log.put('/k/' + (i % 50), Buffer.from('v' + i))).revision
      process.stdout.write(String(revision))
      process.kill(process.pid, 'SIGKILL')
    `
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    const signal = await new Promise((resolve) => child.on('exit', (_code, sig) => resolve(sig)))
    expect(signal).to.equal('SIGKILL')
    const acknowledged = Number(out)
    expect(acknowledged).to.equal(201)
    expect(await logSizes(dir)).to.deep.equal([DEFAULT_LEVEL_LOG_OPTIONS.leveldbWalPreallocateBytes])

    const log = await openLevelLog({ dir, deferFileDeletes: false })
    try {
      expect(log.revision).to.equal(acknowledged)
      for (let i = 150; i < 200; i++) {
        const kv = await log.get(`/k/${i % 50}`)
        expect(kv?.value.toString()).to.equal(`v${i}`)
        expect(kv?.modRevision).to.equal(i + 2)
      }
    } finally {
      await log.close()
    }
  })
})
