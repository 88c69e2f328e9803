/**
 * The soak's clients on the resource API: each one creates, updates and deletes a few ConfigMaps that
 * every such client shares, always with kube-apiserver's preconditions (an update or delete names the
 * resourceVersion it last saw: a CAS), so clients race, and 409s (Conflict, AlreadyExists) and NotFound
 * are part of the run. After any failure the client re-reads the object's version (a GET, not recorded:
 * the resource API shows no createRevision or version, which the checker's reads compare).
 */
import { sleep } from '../../support/watch-client.js'
import { CONFIGMAPS, type ResourcesDriver } from '../drivers/resources.js'
import type { WorkloadContext } from './workload.js'

export const CONFIGMAP_NAMES = Array.from({ length: 6 }, (_, i) => `cm${i}`)

export async function runResourceClient(name: string, driver: ResourcesDriver, rnd: () => number, ctx: WorkloadContext): Promise<void> {
  /** What this client believes each object's resourceVersion is (undefined: absent), refreshed after failures. */
  const known = new Map<string, number | undefined>()
  let i = 0
  while (!ctx.stopped()) {
    const cm = CONFIGMAP_NAMES[Math.floor(rnd() * CONFIGMAP_NAMES.length)]
    const keyBase64 = Buffer.from(CONFIGMAPS + cm).toString('base64')
    const rv = known.get(cm)
    const tag = `${name}.${++i}`
    const verb = rv === undefined ? 'create' : rnd() < 0.75 ? 'update' : 'delete'
    const rec = await ctx.recorder.run(name, driver, {
      type: 'object',
      verb,
      keyBase64,
      tag,
      ...(rv !== undefined ? { resourceVersion: rv } : {}),
    })
    if (rec.outcome === 'ok') {
      ctx.seen.revision = Math.max(ctx.seen.revision, rec.result!.revision)
      known.set(cm, verb === 'delete' ? undefined : rec.result!.revision)
      continue
    }
    if (rec.outcome === 'unknown' || rec.code === 'UNREACHABLE') await sleep(20 + rnd() * 60)
    try {
      known.set(cm, await driver.currentVersion(keyBase64))
    } catch {
      known.delete(cm)
      await sleep(50)
    }
  }
}
