/**
 * kvlog's LevelDB addon (log/level/native/): built by the install into kvlog's own folder and loaded under
 * kvlog's copy of classic-level's JavaScript layer, with classic-level's installed package left as it was
 * published (test/package/pack.test.ts compares it file by file with the published one).
 */
import { expect } from 'chai'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ClassicLevel, kvlogAddonFile } from '../../../../log/level/classic-level.js'
import { filesContaining } from '../../../support/files-under.js'

const REPO = fileURLToPath(new URL('../../../../../', import.meta.url))
const require = createRequire(import.meta.url)

describe("log/level/native: kvlog's LevelDB addon", () => {
  it("ClassicLevel runs on kvlog's addon, built in log/level/native/build", () => {
    expect(kvlogAddonFile, 'the install did not build it: see log/level/native/build-addon.mjs').to.equal(
      join(REPO, 'log', 'level', 'native', 'build', 'Release', 'kvlog_level.node'),
    )
    expect((ClassicLevel as unknown as { kvlogPatchLevel: number }).kvlogPatchLevel).to.equal(4)
    const published = (require('classic-level') as { ClassicLevel: unknown }).ClassicLevel
    expect(ClassicLevel).to.not.equal(published)
  })

  it("leaves classic-level's package untouched: no file of it has kvlog's code", async () => {
    const classicLevel = dirname(require.resolve('classic-level/package.json'))
    expect(await filesContaining(classicLevel, 'kvlog')).to.deep.equal([])
  })
})
