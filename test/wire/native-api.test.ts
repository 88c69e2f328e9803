/**
 * wire/native-api.ts is shared by the store, the server, the client and the browser UI because it holds
 * types only: compiled, it is an empty module, so importing it loads nothing on any side.
 */
import { expect } from 'chai'
import { readFile } from 'node:fs/promises'

describe('wire/native-api: the shared wire types', () => {
  it('compiles to a module with no code', async () => {
    const js = await readFile(new URL('../../wire/native-api.js', import.meta.url), 'utf8')
    const code = js
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/\/\/.*$/gm, '')
      .trim()
    expect(code).to.equal('export {};')
  })
})
