/**
 * The example controller (examples/configmap-checksum) end to end: a real `kvlog serve` process, the
 * controller as its own process (node dist/examples/configmap-checksum/main.js), and a test that changes
 * ConfigMaps through the resource API and watches the derived ones appear, follow, come back after
 * tampering, and go. Also the controller in-process, converging after its watches missed changes and the
 * history was compacted (relist with deletes of unknown final state).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect } from 'chai'
import { KvlogClient, isReason } from '../../clients/index.js'
import { ChecksumController, ENABLED_LABEL, SOURCE_LABEL, checksumData } from '../../examples/configmap-checksum/controller.js'
import { configMap, configMaps, eventually, serverHarness, type ConfigMap } from '../clients/informer/helpers.js'

const MAIN = fileURLToPath(new URL('../../examples/configmap-checksum/main.js', import.meta.url))
const ENABLED = { [ENABLED_LABEL]: 'true' }

describe('example: configmap-checksum controller (real server)', function () {
  this.timeout(60_000)
  const { server, proxyTo, defer } = serverHarness()

  /** Starts main.js and resolves when it printed {"ready":true}. */
  async function controllerProcess(
    endpoint: string,
    namespace: string,
  ): Promise<{ child: ChildProcess; stderr: () => string; exit: Promise<number | string> }> {
    const child = spawn(process.execPath, [MAIN, '--endpoint', endpoint, '--namespace', namespace], { stdio: ['ignore', 'pipe', 'pipe'] })
    const exit = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)))
    defer(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exit
    })
    let stderr = ''
    child.stderr!.on('data', (d) => (stderr += d))
    let stdout = ''
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d) => {
        stdout += d
        if (stdout.includes('"ready":true')) resolve()
      })
      child.on('exit', () => reject(new Error(`the controller exited: ${stderr}`)))
    })
    return { child, stderr: () => stderr, exit }
  }

  /** The derived object's data, or undefined when it does not exist. */
  async function derivedData(endpoint: string, namespace: string, name: string): Promise<Record<string, string> | undefined> {
    try {
      return (await configMaps(endpoint).get(`${name}-checksum`, namespace)).data
    } catch (err) {
      if (isReason(err, 'NotFound')) return undefined
      throw err
    }
  }

  async function derivedMatches(endpoint: string, source: ConfigMap): Promise<boolean> {
    const d = await derivedData(endpoint, source.metadata.namespace!, source.metadata.name!)
    return JSON.stringify(d) === JSON.stringify(checksumData(source))
  }

  it('runs as a process: creates, updates, restores and deletes the derived ConfigMaps', async () => {
    const s = await server()
    const cms = configMaps(s.http)
    // Present before the controller starts: reconciled from the initial list.
    const pre = await cms.create(configMap('demo', 'pre', { a: '1' }, ENABLED))
    await cms.create(configMap('demo', 'ignored', { a: '1' }))
    const ctl = await controllerProcess(s.http, 'demo')

    await eventually('pre-checksum', () => derivedMatches(s.http, pre))
    const web = await cms.create(configMap('demo', 'web', { b: '2', a: '1' }, ENABLED))
    await eventually('web-checksum', () => derivedMatches(s.http, web))
    const derived = await cms.get('web-checksum', 'demo')
    expect(derived.metadata.labels).to.deep.equal({ [SOURCE_LABEL]: 'web' })
    expect(derived.data?.keys).to.equal('a,b')

    // The source changes: the checksum follows.
    const web2 = await cms.update({ ...web, data: { a: '1', b: '3' } })
    await eventually('web-checksum to follow', () => derivedMatches(s.http, web2))
    expect((await cms.get('web-checksum', 'demo')).data?.sha256).to.not.equal(derived.data?.sha256)

    // Someone edits the derived object, or deletes it: it is put back.
    const tampered = await cms.get('web-checksum', 'demo')
    await cms.update({ ...tampered, data: { sha256: 'forged', keys: '' } })
    await eventually('the forged checksum to be corrected', () => derivedMatches(s.http, web2))
    await cms.delete('pre-checksum', 'demo')
    await eventually('pre-checksum to come back', () => derivedMatches(s.http, pre))

    // The source loses its label, or is deleted: the derived object goes.
    const pre2 = await cms.get('pre', 'demo')
    await cms.update({ ...pre2, metadata: { ...pre2.metadata, labels: {} } })
    await eventually('pre-checksum to go', async () => (await derivedData(s.http, 'demo', 'pre')) === undefined)
    await cms.delete('web', 'demo')
    await eventually('web-checksum to go', async () => (await derivedData(s.http, 'demo', 'web')) === undefined)
    expect(await derivedData(s.http, 'demo', 'ignored')).to.equal(undefined)

    ctl.child.kill('SIGTERM')
    expect(await ctl.exit).to.equal(0)
    expect(ctl.stderr()).to.not.match(/TypeError|ReferenceError/)
  })

  it('converges after its watches missed changes and the history was compacted (relist, deletes of unknown final state)', async () => {
    const s = await server()
    const proxy = await proxyTo(s)
    const cms = configMaps(s.http)
    const sources: ConfigMap[] = []
    for (let i = 0; i < 5; i++) sources.push(await cms.create(configMap('cv', `s${i}`, { i: String(i) }, ENABLED)))
    const ctl = new ChecksumController({ endpoint: proxy.url, namespace: 'cv', minBackoffMs: 20, maxBackoffMs: 200 })
    defer(() => ctl.stop())
    let unknownDeletes = 0
    ctl.sources.addEventHandler({ onDelete: (o) => void (unknownDeletes += 'finalStateUnknown' in o ? 1 : 0) })
    let retries = 0
    ctl.sources.on('retry', () => retries++)
    await ctl.start()
    for (const src of sources) await eventually(`${src.metadata.name}-checksum`, () => derivedMatches(s.http, src))

    proxy.refuse = true
    proxy.cutAll()
    await eventually('the informer to notice', () => retries >= 1)
    for (const i of [0, 1, 2]) await cms.delete(`s${i}`, 'cv')
    const s3 = await cms.update({ ...(await cms.get('s3', 'cv')), data: { i: 'new' } })
    const native = new KvlogClient({ endpoint: s.http })
    await native.compact((await native.status()).revision as number)
    proxy.refuse = false

    for (const i of [0, 1, 2])
      await eventually(`s${i}-checksum to go`, async () => (await derivedData(s.http, 'cv', `s${i}`)) === undefined)
    await eventually('s3-checksum to follow', () => derivedMatches(s.http, s3))
    expect(await derivedMatches(s.http, sources[4])).to.equal(true)
    expect(unknownDeletes).to.equal(3)
    expect(ctl.sources.lists).to.equal(2)
  })
})
