/**
 * Shared by the informer and example-controller tests: a ConfigMap client, the server's list as
 * comparable text, and polling for a condition that may need a request to check.
 */
import { ResourceClient, objectKey, type KubeObject } from '../../../clients/index.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { TcpProxy } from '../tcp-proxy.js'

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

export interface ConfigMap extends KubeObject {
  data?: Record<string, string>
}

export function configMaps(endpoint: string): ResourceClient<ConfigMap> {
  return new ResourceClient<ConfigMap>({ endpoint }, { version: 'v1', resource: 'configmaps' })
}

export function configMap(
  namespace: string,
  name: string,
  data: Record<string, string> = {},
  labels: Record<string, string> = {},
): ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace, name, labels }, data }
}

/** Objects as sorted "key@resourceVersion" lines: what a cache must equal. */
export function versions(objects: KubeObject[]): string[] {
  return objects.map((o) => `${objectKey(o)}@${o.metadata.resourceVersion}`).sort()
}

/** Polls `check` until it returns true; on timeout throws with `what` and the last `explain()`. */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  explain: () => unknown = () => '',
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} ${JSON.stringify(explain())}`)
    await sleep(20)
  }
}

/**
 * Real servers and proxies for one describe block, stopped after each test (in reverse order), together
 * with anything else registered with defer().
 */
export function serverHarness(): {
  defer(cleanup: () => Promise<void>): void
  server(args?: string[]): Promise<ServerProcess>
  proxyTo(s: ServerProcess): Promise<TcpProxy>
} {
  const cleanups: Array<() => Promise<void>> = []
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
  })
  const defer = (cleanup: () => Promise<void>) => void cleanups.push(cleanup)
  return {
    defer,
    server: async (args = []) => {
      // Objects go into throwaway namespaces that are never created: they need not exist.
      const s = await startServerProcess(['--resource-namespace-must-exist=false', ...args])
      defer(() => s.cleanup())
      return s
    },
    proxyTo: async (s) => {
      const p = await TcpProxy.start(s.http)
      defer(() => p.close())
      return p
    },
  }
}
