/**
 * Builds the history browser's static assets into dist/apiserver/ui/public (run by the `prepare` and
 * `build` scripts after both TypeScript builds): index.html and style.css from apiserver/ui/public, and
 * the browser ES modules of Preact, htm and uPlot (with uPlot's CSS) from node_modules into vendor/. The
 * app's own modules are compiled there by apiserver/ui/app/tsconfig.json. index.html maps the bare module
 * names to vendor/ with an import map, so no bundler is needed and nothing comes from the network.
 */
import { copyFile, mkdir, readdir } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..', '..', '..')
const out = join(here, 'public')
const require = createRequire(join(root, 'package.json'))

/** Where a package's file is: its folder found through Node's resolution from the project root. */
function packageFile(pkg: string, file: string): string {
  const entry = require.resolve(pkg)
  const marker = `${sep}node_modules${sep}${pkg}${sep}`
  return join(entry.slice(0, entry.lastIndexOf(marker) + marker.length), file)
}

const VENDOR: Array<[string, string, string]> = [
  ['preact', 'dist/preact.mjs', 'preact.mjs'],
  ['preact', 'hooks/dist/hooks.mjs', 'preact-hooks.mjs'],
  ['htm', 'dist/htm.mjs', 'htm.mjs'],
  ['htm', 'preact/index.mjs', 'htm-preact.mjs'],
  ['uplot', 'dist/uPlot.esm.js', 'uplot.mjs'],
  ['uplot', 'dist/uPlot.min.css', 'uplot.css'],
]

await mkdir(join(out, 'vendor'), { recursive: true })
for (const [pkg, file, name] of VENDOR) await copyFile(packageFile(pkg, file), join(out, 'vendor', name))
const source = join(root, 'apiserver', 'ui', 'public')
for (const name of await readdir(source)) await copyFile(join(source, name), join(out, name))
