/**
 * A kubectl tutorial typed as a user types it, against a real `kvlog serve`: the imperative commands
 * send protobuf bodies (and read protobuf answers), the rest JSON and patches. Each step is checked on kubectl's own output.
 *
 *   create namespace · create configmap --from-literal --from-file · create secret generic|tls ·
 *   get -w --output-watch-events (sees every change) · get --watch-only · label · annotate · patch ·
 *   describe · edit ($EDITOR) · run · run --dry-run=server -o yaml · patch --subresource=status ·
 *   wait --for=condition · wait --for=delete · delete --all · delete namespace (its objects go, the
 *   watches see DELETED) · get for every served kind, with -o wide
 */
import { expect } from 'chai'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { parse as parseYaml } from 'yaml'
import { Kube, useServer } from './helpers.js'
import { KubectlHarness, type Background } from './kubectl-harness.js'

const run = promisify(execFile)

/** The data rows of a kubectl table, split on runs of spaces. */
const rows = (out: string): string[][] =>
  out
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s{2,}/))

describe('resource API: a kubectl tutorial', function () {
  this.timeout(120_000)
  const server = useServer()
  let k: KubectlHarness
  const kubectl = (...args: string[]) => k.run(args)
  let watchEvents: Background
  let watchOnly: Background

  before(async () => {
    k = await KubectlHarness.start(server().process.http)
  })

  /** The server's open watchers (kvlog_watchers): a background kubectl is watching once it went up. */
  const watchers = async (): Promise<number> => {
    const text = await (await fetch(`${server().process.http}/metrics`)).text()
    return Number(/^kvlog_watchers (\d+)$/m.exec(text)?.[1] ?? NaN)
  }
  /** Starts a kubectl that watches, and waits until its watch is open. */
  const watching = async (args: string[]): Promise<Background> => {
    const before = await watchers()
    const b = k.background(args)
    const deadline = Date.now() + 15_000
    while ((await watchers()) <= before) {
      if (Date.now() > deadline) throw new Error(`kubectl ${args.join(' ')} opened no watch; output: ${b.output()}`)
      await new Promise((r) => setTimeout(r, 50))
    }
    return b
  }
  after(async () => {
    await k?.stop()
  })

  it('kubectl create namespace demo', async () => {
    expect(await kubectl('create', 'namespace', 'demo')).to.equal('namespace/demo created\n')
    const table = rows(await kubectl('get', 'namespace', 'demo'))
    expect(table[0]).to.deep.equal(['NAME', 'STATUS', 'AGE'])
    expect(table[1].slice(0, 2)).to.deep.equal(['demo', 'Active'])
    // Creating in a namespace that does not exist fails as with kube-apiserver.
    expect(await k.fails(['-n', 'nowhere', 'create', 'configmap', 'x', '--from-literal=a=1'])).to.match(/namespaces "nowhere" not found/)
  })

  it('kubectl get -w --output-watch-events and get --watch-only start watching', async () => {
    watchEvents = await watching(['-n', 'demo', 'get', 'configmaps', '-w', '--output-watch-events'])
    watchOnly = await watching(['-n', 'demo', 'get', 'configmaps', '--watch-only'])
  })

  it('kubectl create configmap --from-literal --from-file', async () => {
    const notes = await k.file('notes.txt', 'first line\nsecond line\n')
    expect(
      await kubectl(
        '-n',
        'demo',
        'create',
        'configmap',
        'app-config',
        '--from-literal=mode=fast',
        '--from-literal=level=3',
        `--from-file=${notes}`,
      ),
    ).to.equal('configmap/app-config created\n')
    const cm = JSON.parse(await kubectl('-n', 'demo', 'get', 'configmap', 'app-config', '-o', 'json'))
    expect(cm.data).to.deep.equal({ mode: 'fast', level: '3', 'notes.txt': 'first line\nsecond line\n' })
    expect(rows(await kubectl('-n', 'demo', 'get', 'cm'))[1].slice(0, 2)).to.deep.equal(['app-config', '3'])
    await watchEvents.until((out) => /^ADDED\s+app-config\s+3\s/m.test(out), 'ADDED row')
    await watchOnly.until((out) => /^app-config\s+3\s/m.test(out), 'row')
  })

  it("kubectl's typed clients send protobuf and read the protobuf answer", async () => {
    const { stdout, stderr } = await k.runBoth(['-n', 'demo', 'create', 'configmap', 'probe', '--from-literal=a=1', '-o', 'json', '-v=8'])
    expect(stderr).to.match(/Request Headers:[\s\S]*Content-Type: application\/vnd\.kubernetes\.protobuf/)
    expect(stderr).to.match(/Response Headers:[\s\S]*Content-Type: application\/vnd\.kubernetes\.protobuf/)
    const printed = JSON.parse(stdout)
    expect(printed.data).to.deep.equal({ a: '1' })
    expect(printed.metadata.uid).to.equal(JSON.parse(await kubectl('-n', 'demo', 'get', 'cm', 'probe', '-o', 'json')).metadata.uid)
    expect(await kubectl('-n', 'demo', 'delete', 'cm', 'probe')).to.equal('configmap "probe" deleted\n')
  })

  it('kubectl create secret generic and tls', async () => {
    expect(
      await kubectl('-n', 'demo', 'create', 'secret', 'generic', 'db', '--from-literal=password=s3cret', '--from-literal=user=app'),
    ).to.equal('secret/db created\n')
    expect(
      Buffer.from(await kubectl('-n', 'demo', 'get', 'secret', 'db', '-o', 'jsonpath={.data.password}'), 'base64').toString(),
    ).to.equal('s3cret')
    const key = `${k.dir}/tls.key`
    const crt = `${k.dir}/tls.crt`
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=demo.example.com',
      '-keyout',
      key,
      '-out',
      crt,
    ])
    expect(await kubectl('-n', 'demo', 'create', 'secret', 'tls', 'web-tls', `--cert=${crt}`, `--key=${key}`)).to.equal(
      'secret/web-tls created\n',
    )
    const table = rows(await kubectl('-n', 'demo', 'get', 'secrets'))
    expect(table[0]).to.deep.equal(['NAME', 'TYPE', 'DATA', 'AGE'])
    expect(table.slice(1).map((r) => r.slice(0, 3))).to.deep.equal([
      ['db', 'Opaque', '2'],
      ['web-tls', 'kubernetes.io/tls', '2'],
    ])
  })

  it('kubectl label, annotate, patch: get -w sees each change', async () => {
    expect(await kubectl('-n', 'demo', 'label', 'configmap', 'app-config', 'tier=web')).to.equal('configmap/app-config labeled\n')
    expect(await kubectl('-n', 'demo', 'annotate', 'configmap', 'app-config', 'owner=team-a')).to.equal('configmap/app-config annotated\n')
    expect(await kubectl('-n', 'demo', 'patch', 'configmap', 'app-config', '-p', '{"data":{"extra":"yes"}}')).to.equal(
      'configmap/app-config patched\n',
    )
    expect(await kubectl('-n', 'demo', 'get', 'cm', '-l', 'tier=web', '-o', 'name')).to.equal('configmap/app-config\n')
    await watchEvents.until((out) => (out.match(/^MODIFIED\s+app-config\s/gm) ?? []).length >= 3, 'three MODIFIED rows')
    await watchEvents.until((out) => /^MODIFIED\s+app-config\s+4\s/m.test(out), 'the patched row (4 keys)')
  })

  it('kubectl describe', async () => {
    const out = await kubectl('-n', 'demo', 'describe', 'configmap', 'app-config')
    expect(out).to.match(/^Name:\s+app-config$/m)
    expect(out).to.match(/^Namespace:\s+demo$/m)
    expect(out).to.match(/^Labels:\s+tier=web$/m)
    expect(out).to.match(/^Annotations:\s+owner: team-a$/m)
    expect(out).to.match(/^extra:\n----\nyes$/m)
    expect(await kubectl('describe', 'namespace', 'demo')).to.match(/^Status:\s+Active$/m)
    expect(await kubectl('-n', 'demo', 'describe', 'secret', 'db')).to.match(/^password:\s+6 bytes$/m)
  })

  it('kubectl edit (through $EDITOR)', async () => {
    const editor = await k.file('editor.sh', '#!/bin/sh\nsed -i \'s/^  mode: fast$/  mode: slow/\' "$1"\n')
    expect(await k.run(['-n', 'demo', 'edit', 'configmap', 'app-config'], { EDITOR: editor, KUBE_EDITOR: editor })).to.equal(
      'configmap/app-config edited\n',
    )
    expect(await kubectl('-n', 'demo', 'get', 'cm', 'app-config', '-o', 'jsonpath={.data.mode}')).to.equal('slow')
    await watchEvents.until((out) => (out.match(/^MODIFIED\s+app-config\s/gm) ?? []).length >= 4, 'the edit')
  })

  it('kubectl run, run --dry-run=server -o yaml, patch --subresource=status, wait --for=condition', async () => {
    expect(await kubectl('-n', 'demo', 'run', 'web', '--image=nginx:1.27', '--labels=app=web')).to.equal('pod/web created\n')
    const dry = parseYaml(await kubectl('-n', 'demo', 'run', 'preview', '--image=nginx:1.27', '--dry-run=server', '-o', 'yaml'))
    expect(dry).to.deep.include({ kind: 'Pod' })
    expect(dry.spec.containers[0].image).to.equal('nginx:1.27')
    expect(dry.metadata.uid).to.be.a('string')
    expect(await k.fails(['-n', 'demo', 'get', 'pod', 'preview'])).to.match(/NotFound/)
    const table = rows(await kubectl('-n', 'demo', 'get', 'pods'))
    expect(table[0]).to.deep.equal(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'])
    expect(table[1].slice(0, 4)).to.deep.equal(['web', '0/1', 'Pending', '0'])

    const waiting = await watching(['-n', 'demo', 'wait', '--for=condition=Ready', 'pod/web', '--timeout=20s'])
    const status =
      '{"status":{"phase":"Running","podIP":"10.1.2.3","conditions":[{"type":"Ready","status":"True"}],"containerStatuses":[{"name":"web","ready":true,"restartCount":1,"image":"nginx:1.27","imageID":"","state":{"running":{}}}]}}'
    expect(await kubectl('-n', 'demo', 'patch', 'pod', 'web', '--subresource=status', '--type=merge', '-p', status)).to.equal(
      'pod/web patched\n',
    )
    expect(await waiting.exited).to.equal(0)
    expect(waiting.output()).to.equal('pod/web condition met\n')
    const wide = rows(await kubectl('-n', 'demo', 'get', 'pods', '-o', 'wide'))
    expect(wide[0]).to.deep.equal(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES'])
    expect(wide[1].slice(0, 4)).to.deep.equal(['web', '1/1', 'Running', '1'])
    expect(wide[1][5]).to.equal('10.1.2.3')
  })

  it('kubectl wait --for=delete and delete --all', async () => {
    await kubectl('-n', 'demo', 'create', 'configmap', 'scratch-1', '--from-literal=a=1')
    await kubectl('-n', 'demo', 'create', 'configmap', 'scratch-2', '--from-literal=a=1')
    const waiting = await watching(['-n', 'demo', 'wait', '--for=delete', 'configmap/scratch-1', '--timeout=20s'])
    await new Kube(server().process.http).delete('/api/v1/namespaces/demo/configmaps/scratch-1')
    expect(await waiting.exited).to.equal(0)
    expect(waiting.output()).to.equal('configmap/scratch-1 condition met\n')
    expect(await kubectl('-n', 'demo', 'delete', 'secrets', '--all')).to.equal('secret "db" deleted\nsecret "web-tls" deleted\n')
    expect(await kubectl('-n', 'demo', 'get', 'secrets')).to.equal('')
  })

  it('kubectl delete namespace: its objects go and the watches see DELETED', async () => {
    const nsWatch = await watching(['get', 'namespaces', '-w', '--output-watch-events'])
    await nsWatch.until((out) => /^ADDED\s+demo\s+Active\s/m.test(out), 'the namespace')
    expect(await kubectl('delete', 'namespace', 'demo')).to.equal('namespace "demo" deleted\n')
    await watchEvents.until((out) => /^DELETED\s+app-config\s/m.test(out) && /^DELETED\s+scratch-2\s/m.test(out), 'DELETED rows')
    await nsWatch.until(
      (out) => /^MODIFIED\s+demo\s+Terminating\s/m.test(out) && /^DELETED\s+demo\s/m.test(out),
      'Terminating, then DELETED',
    )
    expect(await k.fails(['get', 'namespace', 'demo'])).to.match(/namespaces "demo" not found/)
    expect(await kubectl('-n', 'demo', 'get', 'configmaps,secrets,pods')).to.equal('')
    expect(await k.fails(['-n', 'demo', 'create', 'configmap', 'again', '--from-literal=a=1'])).to.match(/namespaces "demo" not found/)
    await watchOnly.until((out) => /^app-config\s+4\s/m.test(out), 'the later rows')
    for (const w of [watchEvents, watchOnly, nsWatch]) w.child.kill()
  })

  it("kubectl get shows the kind's columns for every served kind", async () => {
    const kube = new Kube(server().process.http)
    await kube.mustCreate('/api/v1/nodes', {
      metadata: { name: 'node-1', labels: { 'node-role.kubernetes.io/control-plane': '' } },
      status: {
        conditions: [{ type: 'Ready', status: 'True' }],
        nodeInfo: { kubeletVersion: 'v1.32.0' },
        addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
      },
    })
    await kube.mustCreate('/api/v1/namespaces/default/events', {
      metadata: { name: 'ev-1' },
      involvedObject: { kind: 'Pod', name: 'web', namespace: 'default' },
      reason: 'Pulled',
      message: 'image pulled',
      type: 'Normal',
    })
    await kube.mustCreate('/apis/coordination.k8s.io/v1/namespaces/default/leases', {
      metadata: { name: 'leader' },
      spec: { holderIdentity: 'node-1' },
    })
    await kube.mustCreate('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      metadata: { name: 'tools.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'tools', kind: 'Tool' },
        versions: [{ name: 'v1', served: true, storage: true }],
      },
    })
    const headers: Record<string, string[]> = {
      namespaces: ['NAME', 'STATUS', 'AGE'],
      configmaps: ['NAME', 'DATA', 'AGE'],
      nodes: ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION'],
      events: ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'],
      leases: ['NAME', 'HOLDER', 'AGE'],
    }
    await kubectl('create', 'configmap', 'shown', '--from-literal=a=1')
    // default exists without a Namespace object (it is listed once one is written).
    await kubectl('create', 'namespace', 'listed')
    for (const [kind, header] of Object.entries(headers)) expect(rows(await kubectl('get', kind))[0], kind).to.deep.equal(header)
    expect(rows(await kubectl('get', 'nodes'))[1].filter((_, i) => i !== 3)).to.deep.equal(['node-1', 'Ready', 'control-plane', 'v1.32.0'])
    expect(rows(await kubectl('get', 'events'))[1].slice(1)).to.deep.equal(['Normal', 'Pulled', 'pod/web', 'image pulled'])
    expect(rows(await kubectl('get', 'leases'))[1].slice(0, 2)).to.deep.equal(['leader', 'node-1'])
    expect(rows(await kubectl('get', 'nodes', '-o', 'wide'))[0].slice(5, 7)).to.deep.equal(['INTERNAL-IP', 'EXTERNAL-IP'])
    expect(rows(await kubectl('get', 'crds'))[0]).to.deep.equal(['NAME', 'CREATED AT'])
  })
})
