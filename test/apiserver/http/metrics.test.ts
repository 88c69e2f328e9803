/**
 * GET /metrics against a real `kvlog serve` process: Prometheus text format, and the kvlog_* series
 * following the store (revision, write latency histogram, group-commit batch histogram, db size,
 * compact revision, segments).
 */
import { expect } from 'chai'
import { ok, useServer } from './helpers.js'

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

interface Scrape {
  contentType: string
  samples: Sample[]
  types: Map<string, string>
  helps: Map<string, string>
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( \d+)?$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

/** A sample value as Prometheus reads it (Go's ParseFloat: NaN and Inf in any case; prom-client writes "Nan"). */
function parseValue(text: string): number {
  if (/^\+?inf$/i.test(text)) return Infinity
  if (/^-inf$/i.test(text)) return -Infinity
  if (/^nan$/i.test(text)) return NaN
  const v = Number(text)
  if (Number.isNaN(v)) throw new Error(`not a number: ${text}`)
  return v
}

/** Parses the Prometheus text exposition format strictly enough that a malformed line fails the test. */
function parse(contentType: string, text: string): Scrape {
  const scrape: Scrape = { contentType, samples: [], types: new Map(), helps: new Map() }
  expect(text.endsWith('\n'), 'exposition must end with a newline').to.equal(true)
  for (const line of text.split('\n')) {
    if (line === '') continue
    if (line.startsWith('# HELP ')) {
      const [name, ...help] = line.slice(7).split(' ')
      scrape.helps.set(name, help.join(' '))
      continue
    }
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice(7).split(' ')
      expect(['counter', 'gauge', 'histogram', 'summary', 'untyped'], line).to.include(type)
      scrape.types.set(name, type)
      continue
    }
    expect(line.startsWith('#'), `unexpected comment: ${line}`).to.equal(false)
    const m = SAMPLE.exec(line)
    expect(m, `malformed sample line: ${line}`).to.not.equal(null)
    const labels: Record<string, string> = {}
    if (m![3] !== undefined) for (const l of m![3].matchAll(LABEL)) labels[l[1]] = l[2]
    scrape.samples.push({ name: m![1], labels, value: parseValue(m![4]) })
  }
  return scrape
}

function value(s: Scrape, name: string, labels: Record<string, string> = {}): number {
  const found = s.samples.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v))
  expect(found, `${name} ${JSON.stringify(labels)}`).to.have.length(1)
  return found[0].value
}

function buckets(s: Scrape, name: string): Array<[number, number]> {
  return s.samples.filter((x) => x.name === `${name}_bucket`).map((x) => [parseValue(x.labels.le), x.value])
}

describe('native HTTP API: /metrics (real process)', function () {
  this.timeout(30_000)
  const server = useServer()
  const api = () => server().api

  async function scrape(): Promise<Scrape> {
    const res = await fetch(`${api().base}/metrics`)
    expect(res.status).to.equal(200)
    return parse(res.headers.get('content-type') ?? '', await res.text())
  }

  it('serves Prometheus text format with HELP and TYPE for every kvlog series', async () => {
    const s = await scrape()
    expect(s.contentType).to.match(/^text\/plain; version=0\.0\.4/)
    const expected: Record<string, string> = {
      kvlog_revision: 'gauge',
      kvlog_compact_revision: 'gauge',
      kvlog_db_size_bytes: 'gauge',
      kvlog_segments: 'gauge',
      kvlog_write_duration_seconds: 'histogram',
      kvlog_batch_revisions: 'histogram',
      kvlog_committed_revisions_total: 'counter',
    }
    for (const [name, type] of Object.entries(expected)) {
      expect(s.types.get(name), name).to.equal(type)
      expect(s.helps.get(name), name).to.be.a('string').and.not.equal('')
    }
    // Every sample belongs to a declared family.
    for (const sample of s.samples) {
      const family = sample.name.replace(/_(bucket|sum|count|total)$/, '')
      expect(s.types.has(sample.name) || s.types.has(family), sample.name).to.equal(true)
    }
    expect(value(s, 'kvlog_revision')).to.equal(1)
    expect(value(s, 'kvlog_db_size_bytes')).to.be.greaterThan(0)
  })

  it("names Node's process metrics without a doubled word, and keeps the old names as aliases", async () => {
    const s = await scrape()
    for (const name of ['kvlog_process_cpu_seconds_total', 'kvlog_process_resident_memory_bytes', 'kvlog_nodejs_heap_size_used_bytes']) {
      expect(s.types.has(name), name).to.equal(true)
    }
    // The aliases: the same families under the old prefix.
    for (const name of ['kvlog_process_process_cpu_seconds_total', 'kvlog_process_nodejs_heap_size_used_bytes'])
      expect(s.types.has(name), name).to.equal(true)
  })

  it('follows the revision, counts every write in the latency histogram and every revision in the batch histogram', async () => {
    const before = await scrape()
    const writesBefore = value(before, 'kvlog_write_duration_seconds_count')
    const sumBefore = value(before, 'kvlog_write_duration_seconds_sum')
    const batchSumBefore = value(before, 'kvlog_batch_revisions_sum')
    const batchCountBefore = value(before, 'kvlog_batch_revisions_count')

    // 10 sequential puts, a delete, a txn, then 40 concurrent puts that the writer may group.
    for (let i = 0; i < 10; i++) await api().mustPut(`m/${i}`, 'v')
    ok(await api().delete({ key: 'm/0' }))
    await api().mustTxn({
      success: [
        { type: 'put', key: 'm/t1', value: 'x' },
        { type: 'put', key: 'm/t2', value: 'y' },
      ],
    })
    await Promise.all(Array.from({ length: 40 }, (_, i) => api().mustPut(`m/c${i}`, 'v')))
    const writes = 10 + 1 + 1 + 40
    const revision = await api().revision()
    expect(revision).to.equal(1 + writes)

    const after = await scrape()
    expect(value(after, 'kvlog_revision')).to.equal(revision)
    expect(value(after, 'kvlog_write_duration_seconds_count') - writesBefore).to.equal(writes)
    expect(value(after, 'kvlog_write_duration_seconds_sum')).to.be.greaterThan(sumBefore)
    expect(value(after, 'kvlog_committed_revisions_total')).to.equal(revision - 1)
    // Each revision is one entry in exactly one batch; the 40 concurrent puts need at most 40 batches.
    expect(value(after, 'kvlog_batch_revisions_sum') - batchSumBefore).to.equal(writes)
    const batches = value(after, 'kvlog_batch_revisions_count') - batchCountBefore
    expect(batches).to.be.within(13, writes)

    for (const name of ['kvlog_write_duration_seconds', 'kvlog_batch_revisions']) {
      const b = buckets(after, name)
      expect(b.length, name).to.be.at.least(5)
      for (let i = 1; i < b.length; i++) {
        expect(b[i][0], `${name} bucket bounds increase`).to.be.greaterThan(b[i - 1][0])
        expect(b[i][1], `${name} buckets are cumulative`).to.be.at.least(b[i - 1][1])
      }
      expect(b[b.length - 1][0], name).to.equal(Infinity)
      expect(b[b.length - 1][1], `${name} +Inf bucket = count`).to.equal(value(after, `${name}_count`))
    }
    // A batch of one revision lands in the le="1" bucket.
    expect(value(after, 'kvlog_batch_revisions_bucket', { le: '1' })).to.be.at.least(12)
  })

  it('does not count reads, read-only transactions or rejected requests as revisions', async () => {
    const before = await scrape()
    await api().mustRange({ key: 'm/', prefix: true })
    await api().mustTxn({ success: [{ type: 'range', key: 'm/1' }] })
    expect((await api().put({ key: '' })).status).to.equal(400)
    const after = await scrape()
    expect(value(after, 'kvlog_revision')).to.equal(value(before, 'kvlog_revision'))
    expect(value(after, 'kvlog_committed_revisions_total')).to.equal(value(before, 'kvlog_committed_revisions_total'))
    expect(value(after, 'kvlog_batch_revisions_count')).to.equal(value(before, 'kvlog_batch_revisions_count'))
  })

  it('reports db size, segments and compact revision as status does', async () => {
    const head = await api().revision()
    ok(await api().compact(head - 5))
    const status = ok(await api().status())
    const s = await scrape()
    expect(value(s, 'kvlog_compact_revision')).to.equal(head - 5)
    expect(value(s, 'kvlog_segments')).to.equal(status.segments.length)
    expect(value(s, 'kvlog_db_size_bytes')).to.be.greaterThan(0)
    expect(value(s, 'kvlog_revision')).to.equal(status.revision)
  })
})
