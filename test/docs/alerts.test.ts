/**
 * docs/alerts/kvlog.rules.yml stays usable: it parses as Prometheus rule groups, every rule has a name,
 * an expression and a summary, and every kvlog metric an expression names is one the server registers
 * (apiserver/metrics.ts), so a renamed metric cannot leave an alert that never fires.
 */
import { expect } from 'chai'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'

const REPO = fileURLToPath(new URL('../../../', import.meta.url))

interface Rule {
  alert?: string
  expr?: string
  annotations?: { summary?: string }
}

describe('docs/alerts/kvlog.rules.yml', () => {
  it('names only metrics the server registers, in well-formed rules', async () => {
    const rules = parse(await readFile(`${REPO}docs/alerts/kvlog.rules.yml`, 'utf8')) as { groups: Array<{ name: string; rules: Rule[] }> }
    const source = await readFile(`${REPO}apiserver/metrics.ts`, 'utf8')
    const registered = new Set([...source.matchAll(/'(kvlog_[a-z_]+)'/g)].map((m) => m[1]))
    expect(rules.groups).to.have.length.greaterThan(0)
    for (const group of rules.groups) {
      for (const rule of group.rules) {
        expect(rule.alert, 'alert name').to.be.a('string')
        expect(rule.annotations?.summary, `${rule.alert}: summary`).to.be.a('string')
        const metrics = [...(rule.expr ?? '').matchAll(/kvlog_[a-z_]+/g)].map((m) => m[0])
        expect(metrics.length, `${rule.alert}: a kvlog metric`).to.be.greaterThan(0)
        for (const m of metrics) expect(registered.has(m), `${rule.alert}: ${m} is registered`).to.equal(true)
      }
    }
  })
})
