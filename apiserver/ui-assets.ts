/**
 * Serves the history browser's static assets (apiserver/ui/) at /ui on the native HTTP door. The assets are built into
 * dist/apiserver/ui/public at install time (the `prepare` script, apiserver/ui/build.ts): the app's ES
 * modules, Preact, htm and uPlot copied from node_modules, and index.html. Nothing is fetched from the
 * network at run time. Views live in the URL's fragment (/ui/#/keys?...), so every path under /ui that is
 * not a file answers index.html as well.
 *
 * The `ui` setting: 'on', 'off', or 'auto' (the default): served only when the HTTP listener is on a
 * loopback address, since the browser reads every key and exposes them to whoever reaches the port.
 */
import { readFile } from 'node:fs/promises'
import { extname, normalize } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import type { UiMode } from '../config/index.js'

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.map': 'application/json',
}

/** Errors that mean the path names no file (a NUL byte in it, a name too long, a file as a directory). */
const NO_SUCH_FILE = new Set(['ENOENT', 'EISDIR', 'ENOTDIR', 'ENAMETOOLONG', 'ERR_INVALID_ARG_VALUE', 'ERR_INVALID_ARG_TYPE'])

const PUBLIC = fileURLToPath(new URL('./ui/public/', import.meta.url))

export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '')
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h)
}

/** Whether /ui is served, given the setting and the HTTP listener's HOST:PORT. */
export function uiEnabled(mode: UiMode, listenHttp: string): boolean {
  if (mode !== 'auto') return mode === 'on'
  return isLoopback(listenHttp.slice(0, listenHttp.lastIndexOf(':')))
}

export function uiRoutes(app: FastifyInstance): void {
  // A browser pointed at the server's address lands on the history browser.
  app.get('/', async (_request, reply) => reply.redirect('/ui/'))
  app.get('/ui', async (_request, reply) => reply.redirect('/ui/'))
  app.get('/ui/*', async (request, reply) => {
    const rest = (request.params as { '*': string })['*'] || 'index.html'
    const path = normalize(PUBLIC + rest)
    const inside = path.startsWith(PUBLIC) && !rest.split('/').includes('..')
    const file = inside && extname(path) !== '' ? path : PUBLIC + 'index.html'
    const body = await readFile(file).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== undefined && NO_SUCH_FILE.has(err.code)) return undefined
      throw err
    })
    if (body === undefined) {
      const missing = file === PUBLIC + 'index.html' ? 'the UI assets are not built (npm run build)' : `no file ${rest}`
      return reply.status(404).type('text/plain; charset=utf-8').send(missing)
    }
    return reply
      .type(TYPES[extname(file)] ?? 'application/octet-stream')
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .send(body)
  })
}
