/**
 * OpenStack's etcd3gw (Debian python3-etcd3gw) through the JSON gateway, against a real etcd 3.4: the same
 * driver script (etcd3gw-driver.py) runs against etcd and against kvlog, each on a fresh store, and every
 * observation must be the same. Covers put/get/delete, get_prefix/get_all/delete_prefix, replace and
 * create (txns comparing value and create_revision), watch_prefix with cancel, lease
 * grant/refresh/ttl/keys/revoke, and etcd3gw's Lock (a lease plus txns).
 */
import { expect } from 'chai'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { startEtcd } from '../../../support/etcd-process.js'
import { startServerProcess } from '../../../support/server-process.js'

/** Debian's interpreter, where python3-etcd3gw is installed (a python3 earlier on PATH may lack it). */
const PYTHON = process.env.ETCD3GW_PYTHON ?? '/usr/bin/python3'
const DRIVER = fileURLToPath(new URL('../../../../../test/apiserver/etcd/gateway/etcd3gw-driver.py', import.meta.url))

type Step = [label: string, observation: unknown]

async function drive(endpoint: string): Promise<Step[]> {
  const [host, port] = endpoint.split(':')
  const { stdout } = await promisify(execFile)(PYTHON, [DRIVER, host, port], { timeout: 30_000 })
  return JSON.parse(stdout) as Step[]
}

describe('apiserver/etcd/gateway: etcd3gw drives kvlog as it drives etcd 3.4', function () {
  this.timeout(90_000)
  let etcdSteps: Step[]
  let kvlogSteps: Step[]

  before(async () => {
    const etcd = await startEtcd()
    try {
      etcdSteps = await drive(etcd.endpoint)
    } finally {
      await etcd.stop()
    }
    const kvlog = await startServerProcess(['--etcd-version', '3.4.23'])
    try {
      kvlogSteps = await drive(kvlog.grpc)
    } finally {
      await kvlog.stop()
      await kvlog.cleanup()
    }
  })

  it('observes the same results from both, step by step', () => {
    expect(kvlogSteps.map((s) => s[0])).to.deep.equal(etcdSteps.map((s) => s[0]))
    for (let i = 0; i < etcdSteps.length; i++) {
      expect(kvlogSteps[i], `${etcdSteps[i][0]}: etcd gave ${JSON.stringify(etcdSteps[i])}`).to.deep.equal(etcdSteps[i])
    }
  })

  it('sees, through etcd3gw, what the scenario is about', () => {
    const by = new Map(kvlogSteps)
    expect(by.get('replace with the right value')).to.equal(true)
    expect(by.get('create n again')).to.equal(false)
    expect((by.get('watch_prefix w/ events') as unknown[]).length).to.equal(3)
    expect(by.get('get_prefix l/ after revoke')).to.deep.equal([])
    expect(by.get('lock acquire')).to.equal(true)
    expect(by.get('other lock acquire while held')).to.equal(false)
    expect(by.get('other lock acquire after release')).to.equal(true)
  })
})
