/**
 * Every route the HTTP listener serves, as "METHOD /path" (fastify's onRoute): what the permission table
 * test (test/security/) checks it covers, so that a new route cannot go untested for authorization.
 */
import type { FastifyInstance } from 'fastify'

const lists = new WeakMap<FastifyInstance, Set<string>>()

/** Starts recording the routes added to `app` from now on (call before any route is added). */
export function recordRoutes(app: FastifyInstance): void {
  const routes = new Set<string>()
  lists.set(app, routes)
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') routes.add(`${method} ${route.url}`)
  })
}

/** The routes recorded for `app`, sorted. */
export function routesOf(app: FastifyInstance): string[] {
  return [...(lists.get(app) ?? [])].sort()
}
