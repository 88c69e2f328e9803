/**
 * kubectl (v1.32, /usr/bin/kubectl) pointed at a real kvlog server: api-resources, get (table, -o yaml,
 * -o json), get -w receiving live changes, create -f, apply -f (a CRD, then objects of the new kind),
 * replace -f, label, annotate, patch --type=merge, get --chunk-size (paged lists), delete. kubectl runs with its default validation
 * (server-side, through the minimal /openapi/v3) and a private kubeconfig and discovery cache.
 */
import { expect } from 'chai'
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { parse as parseYaml } from 'yaml'
import { Kube, useServer } from './helpers.js'

const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl'
const run = promisify(execFile)

const CONFIGMAP = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels:
    app: demo
data:
  mode: fast
`

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wd]
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
    additionalPrinterColumns:
    - name: Size
      type: integer
      jsonPath: .spec.size
`

const widget = (size: number) => `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
spec:
  size: ${size}
`

describe('resource API: kubectl', function () {
  this.timeout(60_000)
  const server = useServer()
  let dir: string
  let env: NodeJS.ProcessEnv
  const children: ReturnType<typeof spawn>[] = []

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-kubectl-'))
    const kubeconfig = join(dir, 'kubeconfig')
    await writeFile(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: kvlog',
        '  cluster:',
        `    server: ${server().process.http}`,
        'contexts:',
        '- name: kvlog',
        '  context:',
        '    cluster: kvlog',
        '    namespace: default',
        'current-context: kvlog',
        '',
      ].join('\n'),
    )
    env = { ...process.env, KUBECONFIG: kubeconfig, HOME: dir }
  })
  after(async () => {
    for (const c of children) c.kill()
    await rm(dir, { recursive: true, force: true })
  })

  /** Runs kubectl; resolves with stdout, or rejects with the exit code and stderr. */
  const kubectl = async (...args: string[]): Promise<string> => {
    const { stdout } = await run(KUBECTL, ['--cache-dir', join(dir, 'cache'), ...args], { env, timeout: 20_000 })
    return stdout
  }
  const file = async (name: string, text: string) => {
    const path = join(dir, name)
    await writeFile(path, text)
    return path
  }

  it('api-resources lists the built-in kinds', async () => {
    const out = await kubectl('api-resources')
    const rows = out
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(/\s+/)[0])
    expect(rows).to.include.members([
      'configmaps',
      'namespaces',
      'pods',
      'secrets',
      'events',
      'nodes',
      'leases',
      'customresourcedefinitions',
    ])
    // Without any kubeconfig, just --server.
    const { stdout } = await run(KUBECTL, ['--cache-dir', join(dir, 'cache2'), '--server', server().process.http, 'get', 'namespaces'], {
      env: { ...env, KUBECONFIG: '/dev/null' },
      timeout: 20_000,
    })
    expect(stdout).to.equal('')
  })

  it('create -f, then get as a table, -o yaml and -o json', async () => {
    expect(await kubectl('create', '-f', await file('cm.yaml', CONFIGMAP))).to.match(/configmap\/settings created/)
    const table = (await kubectl('get', 'configmaps')).trim().split('\n')
    expect(table[0].split(/\s+/)).to.deep.equal(['NAME', 'DATA', 'AGE'])
    expect(table[1].split(/\s+/)[0]).to.equal('settings')
    const yaml = parseYaml(await kubectl('get', 'cm', 'settings', '-o', 'yaml'))
    expect(yaml.data).to.deep.equal({ mode: 'fast' })
    expect(yaml.metadata.namespace).to.equal('default')
    const json = JSON.parse(await kubectl('get', 'cm', 'settings', '-o', 'json'))
    expect(json.metadata.labels).to.deep.equal({ app: 'demo' })
    expect(json.metadata.resourceVersion).to.match(/^[0-9]+$/)
  })

  it('apply -f a CRD, then objects of the new kind; apply again configures; replace -f', async () => {
    expect(await kubectl('apply', '-f', await file('crd.yaml', CRD))).to.match(
      /customresourcedefinition.apiextensions.k8s.io\/widgets.example.com created/,
    )
    expect(await kubectl('apply', '-f', await file('w.yaml', widget(3)))).to.match(/widget.example.com\/w1 created/)
    expect(await kubectl('apply', '-f', await file('w.yaml', widget(4)))).to.match(/widget.example.com\/w1 configured/)
    expect(await kubectl('apply', '-f', await file('w.yaml', widget(4)))).to.match(/widget.example.com\/w1 unchanged/)
    const rows = (await kubectl('get', 'widgets'))
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/))
    expect(rows[0]).to.deep.equal(['NAME', 'SIZE', 'AGE'])
    expect(rows[1].slice(0, 2)).to.deep.equal(['w1', '4'])
    expect(await kubectl('replace', '-f', await file('w.yaml', widget(5)))).to.match(/widget.example.com\/w1 replaced/)
    expect(JSON.parse(await kubectl('get', 'wd', 'w1', '-o', 'json')).spec.size).to.equal(5)
  })

  it('label, annotate and patch --type=merge', async () => {
    expect(await kubectl('label', 'widget', 'w1', 'color=red')).to.match(/labeled/)
    expect(await kubectl('annotate', 'widget', 'w1', 'note=hello')).to.match(/annotated/)
    expect(await kubectl('patch', 'widget', 'w1', '--type=merge', '-p', '{"spec":{"size":9}}')).to.match(/patched/)
    expect(await kubectl('patch', 'cm', 'settings', '-p', '{"data":{"extra":"1"}}')).to.match(/patched/)
    const w = JSON.parse(await kubectl('get', 'widget', 'w1', '-o', 'json'))
    expect(w.metadata.labels).to.deep.equal({ color: 'red' })
    expect(w.metadata.annotations.note).to.equal('hello')
    expect(w.spec.size).to.equal(9)
    expect(JSON.parse(await kubectl('get', 'cm', 'settings', '-o', 'json')).data).to.deep.equal({ mode: 'fast', extra: '1' })
    expect(await kubectl('get', 'widgets', '-l', 'color=red', '-o', 'name')).to.equal('widget.example.com/w1\n')
    // describe also lists the object's events, by involvedObject field selectors.
    expect(await kubectl('describe', 'cm', 'settings')).to.match(/^Name:\s+settings$/m)
  })

  /** Starts `kubectl get ... -w`; `until` waits for its output to satisfy a predicate. */
  const watchKubectl = (...args: string[]) => {
    const child = spawn(KUBECTL, ['--cache-dir', join(dir, 'cache'), 'get', ...args, '-w'], { env })
    children.push(child)
    const state = { out: '' }
    child.stdout!.on('data', (d) => (state.out += d))
    const until = async (pred: (out: string) => boolean, what: string) => {
      const deadline = Date.now() + 15_000
      while (!pred(state.out)) {
        if (Date.now() > deadline) throw new Error(`kubectl get -w: no ${what}; output: ${state.out}`)
        await new Promise((r) => setTimeout(r, 50))
      }
    }
    return { child, until }
  }

  it('get -w (table) prints a row for each change', async () => {
    const { child, until } = watchKubectl('widgets')
    await until((out) => /^w1\s+9\s/m.test(out), 'initial row')
    await new Kube(server().process.http).patch('/apis/example.com/v1/namespaces/default/widgets/w1', { spec: { size: 10 } })
    await until((out) => /^w1\s+10\s/m.test(out), 'row after the change')
    child.kill()
  })

  it('get -w -o json receives live changes', async () => {
    const { child, until } = watchKubectl('widgets', '-o', 'json')
    const objects = (out: string) =>
      out
        .split(/\n(?=\{)/)
        .filter((s) => s.trim() !== '')
        .map((s) => JSON.parse(s))
    await until((out) => out.includes('"w1"'), 'initial object')
    const kube = new Kube(server().process.http)
    await kube.patch('/apis/example.com/v1/namespaces/default/widgets/w1', { spec: { size: 42 } })
    await until((out) => {
      try {
        return objects(out).some((o) => o.spec?.size === 42)
      } catch {
        return false // a partial object at the end of the output
      }
    }, 'update to size 42')
    await kube.post('/apis/example.com/v1/namespaces/default/widgets', { metadata: { name: 'w2' }, spec: { size: 1 } })
    await until((out) => out.includes('"w2"'), 'new object w2')
    child.kill()
  })

  it('get --chunk-size walks a collection page by page, as a table and as -o json', async () => {
    const kube = new Kube(server().process.http)
    const names = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7']
    expect((await kube.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'paged' } })).status).to.equal(
      201,
    )
    for (const name of names) {
      const r = await kube.post('/api/v1/namespaces/paged/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } })
      expect(r.status).to.equal(201)
    }
    const rows = (await kubectl('get', 'configmaps', '-n', 'paged', '--chunk-size', '3')).trim().split('\n')
    expect(rows.slice(1).map((l) => l.split(/\s+/)[0])).to.deep.equal(names)
    const json = JSON.parse(await kubectl('get', 'configmaps', '-n', 'paged', '--chunk-size', '2', '-o', 'json'))
    expect(json.items.map((o: { metadata: { name: string } }) => o.metadata.name)).to.deep.equal(names)
  })

  it('delete removes objects; get then reports NotFound', async () => {
    expect(await kubectl('delete', 'widget', 'w1')).to.match(/widget.example.com "w1" deleted/)
    expect(await kubectl('delete', '-f', join(dir, 'cm.yaml'))).to.match(/configmap "settings" deleted/)
    let stderr = ''
    try {
      await kubectl('get', 'cm', 'settings')
    } catch (err) {
      stderr = (err as { stderr: string }).stderr
    }
    expect(stderr).to.match(/NotFound/)
  })
})
