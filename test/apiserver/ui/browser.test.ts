/**
 * The history browser at /ui in a real headless Chromium (Debian's /usr/bin/chromium, driven by
 * playwright-core, which downloads no browser) against a real `kvlog serve`: the views render, the tree
 * navigates, an old revision shows the old value, a key's history shows its diffs and who wrote each
 * version (door and user; the store itself for a lease expiry), a live write appears (with its author)
 * within a second, a compacted revision says so, a shared URL reopens the same view, the keyboard works,
 * a phone-width page does not overflow, and no view logs a console error. Screenshots go to
 * <tmpdir>/kvlog-ui-screenshots.
 */
import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { chromium, type Browser, type Page } from 'playwright-core'
import { KvlogClient } from '../../../clients/index.js'
import { etcdGrpc } from '../../support/etcd-grpc.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { sleep } from '../../support/wait.js'

const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium'
export const SCREENSHOTS = join(tmpdir(), 'kvlog-ui-screenshots')
/** How many pixels the page is wider than the window (evaluated in the page). */
const OVERFLOW = 'document.documentElement.scrollWidth - document.documentElement.clientWidth'

describe('history browser /ui (real Chromium)', function () {
  this.timeout(60_000)
  let server: ServerProcess
  let kv: KvlogClient
  let browser: Browser
  let page: Page
  const problems: string[] = []
  let floor = 0
  let v1 = 0
  let v2 = 0
  /** A write through the etcd door, and a leased key's delete when its lease expired. */
  let viaEtcd = 0
  let expired = 0
  /** While set, the browser's own log line for a 410 answer is expected: the view asked below the floor on purpose. */
  let belowFloor = false

  const open = async (hash: string, viewport = { width: 1200, height: 800 }) => {
    const p = await browser.newPage({ viewport })
    p.on('console', (m) => {
      if (belowFloor && /status of 410/.test(m.text())) return
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`)
    })
    p.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`))
    await p.goto(`${server.http}/ui/${hash}`)
    return p
  }
  const shot = (p: Page, name: string) => p.screenshot({ path: join(SCREENSHOTS, `${name}.png`) })

  before(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_BIN)`)
    await mkdir(SCREENSHOTS, { recursive: true })
    ;[server, browser] = await Promise.all([
      startServerProcess(['--lease-min-ttl', '1']),
      chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] }),
    ])
    kv = new KvlogClient({ endpoint: server.http })
    await kv.put('/gone/x', 'compacted away')
    floor = (await kv.put('/gone/x', 'still here')).revision
    await kv.compact(floor)
    v1 = (await kv.put('/app/config', JSON.stringify({ replicas: 1, image: 'web:1' }))).revision
    await kv.put('/app/notes', 'line one\nline two\n')
    v2 = (await kv.put('/app/config', JSON.stringify({ replicas: 2, image: 'web:1' }))).revision
    await kv.put('/app/notes', 'line one\nline 2\n')
    for (let i = 0; i < 30; i++)
      await kv.put(
        `/registry/pods/ns${i % 3}/pod-${String(i).padStart(2, '0')}`,
        JSON.stringify({ kind: 'Pod', metadata: { name: `pod-${i}` } }),
      )
    await kv.put('/app/tmp', 'x')
    await kv.delete('/app/tmp')
    const etcd = etcdGrpc(server.grpc)
    try {
      const put = await etcd.call('KV', 'Put', { key: Buffer.from('/app/via-etcd'), value: Buffer.from('e') })
      viaEtcd = Number((put.header as { revision: string }).revision)
    } finally {
      etcd.close()
    }
    const lease = await kv.leaseGrant(1)
    await kv.put('/app/leased', 'for a second', { lease: lease.id })
    for (let i = 0; i < 100 && expired === 0; i++) {
      await sleep(100)
      expired = (await kv.history('/app/leased')).events.find((e) => e.type === 'DELETE')?.revision ?? 0
    }
    expect(expired).to.be.above(0)
  })

  after(async () => {
    await browser?.close()
    await server?.cleanup()
  })

  it('opens /ui: the timeline chart, the head revision and the live state', async () => {
    page = await open('')
    const head = (await kv.status()).revision as number
    await page
      .getByTestId('head')
      .filter({ hasText: String(head) })
      .waitFor()
    await page.locator('.timeline-chart canvas').waitFor()
    await page.getByTestId('live').filter({ hasText: 'live' }).waitFor()
    // The latest writes, all made before the page opened, come from the history, newest first.
    const recent = page.getByTestId('recent')
    await recent.locator('li', { hasText: '/app/leased' }).first().waitFor()
    expect(await recent.locator('li').first().textContent()).to.contain(`${expired} DELETE /app/leased`)
    await recent.locator('li', { hasText: '/registry/pods/ns0/pod-00' }).waitFor()
    await shot(page, 'timeline')
  })

  it('reads plain numbers in a timeline URL as revisions, RFC 3339 as times, and refuses anything else', async () => {
    const events = (await kv.history('/app/config')).events
    const time = (rev: number) => (events.find((e) => e.revision === rev) as unknown as { time: string }).time
    const asked = page.waitForRequest((r) => {
      const q = new URL(r.url()).searchParams
      return r.url().includes('/v1/history/buckets') && q.get('fromTime') === time(v1)
    })
    await page.goto(`${server.http}/ui/#/timeline?from=${v1}&to=${v2}`)
    await asked
    expect(await page.getByTestId('range-revisions').textContent()).to.equal(`revisions ${v1}–${v2}`)
    await page.locator('.timeline-chart canvas').waitFor()
    const byTime = page.waitForRequest((r) => new URL(r.url()).searchParams.get('fromTime') === time(v2))
    await page.goto(`${server.http}/ui/#/timeline?from=${encodeURIComponent(time(v2))}`)
    await byTime
    await page.goto(`${server.http}/ui/#/timeline?from=9030x&to=${v2}`)
    await page.locator('[data-code="INVALID_ARGUMENT"]').waitFor()
    // The next test starts from a full load, as it would from the first test's page.
    await page.goto('about:blank')
    await page.goto(`${server.http}/ui/#/timeline`)
    await page.locator('.timeline-chart canvas').waitFor()
  })

  it('navigates the tree down to a key and shows its value, JSON pretty-printed', async () => {
    await page.goto(`${server.http}/ui/#/keys`)
    await page.locator('.tree a', { hasText: '/' }).first().click()
    await page.locator('.tree a', { hasText: 'app/' }).click()
    // Opening a subtree shows its children, counted under its prefix.
    await page.locator('.muted', { hasText: 'keys under /app/' }).waitFor()
    await page.locator('.tree a[data-leaf="true"]', { hasText: 'config' }).click()
    await page.getByTestId('selected-key').filter({ hasText: '/app/config' }).waitFor()
    // The value is fetched after the key is selected: waited for until it shows.
    await page.getByTestId('value').filter({ hasText: '"replicas": 2' }).waitFor()
    await page.goto(`${server.http}/ui/#/keys?prefix=/registry/pods/`)
    await page.getByTestId('state-summary').filter({ hasText: '30 keys' }).waitFor()
    await page.locator('.vlist-row').first().filter({ hasText: 'pods · ns0 · pod-00' }).waitFor()
    await page.locator('.tree a', { hasText: 'ns1/' }).filter({ hasText: '10' }).waitFor()
    await shot(page, 'keys')
  })

  it('picks an old revision and shows the old value; the URL carries it', async () => {
    await page.goto(`${server.http}/ui/#/keys?prefix=/app/&key=/app/config`)
    await page.getByTestId('value').filter({ hasText: '"replicas": 2' }).waitFor()
    await page.fill('#pick-rev', String(v1))
    await page.press('#pick-rev', 'Enter')
    await page
      .getByTestId('picked-rev')
      .filter({ hasText: String(v1) })
      .waitFor()
    await page.getByTestId('value').filter({ hasText: '"replicas": 1' }).waitFor()
    expect(page.url()).to.contain(`rev=${v1}`)
  })

  it("opens a key's history: every version with a structural JSON diff, a line diff for text, deletes marked", async () => {
    await page.goto(`${server.http}/ui/#/key?key=/app/config`)
    const second = page.locator(`.version[data-revision="${v2}"]`)
    await second.waitFor()
    expect(await second.locator('.del').textContent()).to.contain('.replicas: 1')
    expect(await second.locator('.add').textContent()).to.contain('.replicas: 2')
    expect(await second.locator('pre').getAttribute('data-diff')).to.equal('json')
    expect(await second.getByTestId('who').textContent()).to.equal('by anonymous (node) via http')
    await shot(page, 'key-history-json')
    await page.goto(`${server.http}/ui/#/key?key=/app/via-etcd`)
    expect(await page.locator(`.version[data-revision="${viaEtcd}"]`).getByTestId('who').textContent()).to.match(
      /^by anonymous \(grpc-node-js\/[\d.]+\) via etcd$/,
    )
    await page.goto(`${server.http}/ui/#/key?key=/app/leased`)
    await page.locator(`.version[data-revision="${expired}"] .who`, { hasText: 'by kvlog (lease expiry)' }).waitFor()
    await page.goto(`${server.http}/ui/#/key?key=/app/notes`)
    await page.locator('pre[data-diff="lines"] .del', { hasText: 'line two' }).waitFor()
    expect(await page.locator('pre[data-diff="lines"] .add').textContent()).to.contain('line 2')
    await page.goto(`${server.http}/ui/#/key?key=/app/tmp`)
    await page.locator('.tag.DELETE', { hasText: 'deleted' }).waitFor()
    await shot(page, 'key-history')
  })

  it('a live write appears without a reload', async () => {
    await page.goto(`${server.http}/ui/#/timeline`)
    await page.getByTestId('live').filter({ hasText: 'live' }).waitFor()
    const url = page.url()
    await kv.put('/live/now', 'hello')
    // The recent list is filled only by the live watch (nothing polls it): the write showing up at all,
    // on the same page, is the push. The deadline only catches a hang.
    await page.getByTestId('recent').locator('a', { hasText: '/live/now' }).waitFor({ timeout: 20_000 })
    expect(page.url()).to.equal(url)
    // Who wrote it, as the history shows it: the watch event carries its author.
    const row = page.getByTestId('recent').locator('li', { hasText: '/live/now' })
    expect(await row.getByTestId('recent-who').textContent()).to.equal('by anonymous (node) via http')
  })

  it("an anonymous write shows its client's user agent, cut short", async () => {
    const write = async (key: string, agent: string) => {
      const res = await fetch(`${server.http}/v1/kv`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', 'user-agent': agent },
        body: JSON.stringify({ key, value: 'x' }),
      })
      expect(res.status).to.equal(200)
      return ((await res.json()) as { header: { revision: number } }).header.revision
    }
    const kubectl = await write('/agents/a', 'kubectl/v1.31.0 (linux/amd64) kubernetes/9edcffc')
    const long = await write('/agents/b', `my-controller/1.0 ${'x'.repeat(200)}`)
    // Full loads: a hash-only change could race the previous view's own updates.
    await page.goto('about:blank')
    await page.goto(`${server.http}/ui/#/key?key=/agents/a`)
    await page
      .locator(`.version[data-revision="${kubectl}"]`)
      .getByTestId('who')
      .filter({ hasText: 'by anonymous (kubectl/v1.31.0 (linux/amd64) kubernetes/9edcffc) via http' })
      .waitFor()
    await page.goto('about:blank')
    await page.goto(`${server.http}/ui/#/key?key=/agents/b`)
    const who = page.locator(`.version[data-revision="${long}"]`).getByTestId('who')
    await who.waitFor()
    expect(await who.textContent()).to.equal(`by anonymous (${`my-controller/1.0 ${'x'.repeat(200)}`.slice(0, 64)}) via http`)
  })

  it('a compacted revision says the history was compacted and from which revision it is available', async () => {
    belowFloor = true
    await page.goto(`${server.http}/ui/#/keys?prefix=/gone/&key=/gone/x&rev=${floor - 1}`)
    const notice = page.locator('[data-code="COMPACTED"]').first()
    await notice.waitFor()
    expect(await notice.textContent()).to.contain(`available from revision ${floor}`)
    await page.goto(`${server.http}/ui/#/revision?rev=${floor - 1}`)
    await page.locator('[data-code="COMPACTED"]').first().waitFor()
    await shot(page, 'compacted')
    await page.goto(`${server.http}/ui/#/timeline`)
    belowFloor = false
  })

  it('a shared URL reopens the same view', async () => {
    await page.goto(`${server.http}/ui/#/keys?prefix=/app/&key=/app/config&rev=${v1}`)
    await page.getByTestId('value').filter({ hasText: '"replicas": 1' }).waitFor()
    const shared = await open(new URL(page.url()).hash)
    await shared.getByTestId('value').filter({ hasText: '"replicas": 1' }).waitFor()
    expect(await shared.getByTestId('picked-rev').textContent()).to.equal(String(v1))
    await shared.reload()
    await shared.getByTestId('selected-key').filter({ hasText: '/app/config' }).waitFor()
    await shared.close()
  })

  it('works from the keyboard: view keys, / to search, arrows and Enter in the tree, [ ] between revisions', async () => {
    await page.goto(`${server.http}/ui/#/timeline`)
    await page.locator('.timeline-chart canvas').waitFor()
    await page.keyboard.press('5')
    await page.getByTestId('status-summary').waitFor()
    await page.keyboard.press('/')
    await page.waitForFunction("document.activeElement?.id === 'prefix-search'")
    await page.keyboard.press('Control+A')
    await page.keyboard.type('/app/')
    await page.keyboard.press('Enter')
    await page.locator('.tree a', { hasText: 'config' }).waitFor()
    await page.locator('.tree a', { hasText: 'notes' }).waitFor()
    await page.locator('.tree a').first().focus()
    await page.waitForFunction("document.activeElement?.matches('.tree a') === true")
    await page.keyboard.press('ArrowDown')
    // The focus moves on the key's handler; wait for it rather than read it at once (a loaded machine).
    await page.waitForFunction("(document.activeElement?.textContent ?? '').includes('notes')")
    await page.keyboard.press('Enter')
    await page.getByTestId('selected-key').filter({ hasText: '/app/notes' }).waitFor()
    // A full load of the revision view: a hash-only change could race the keys view's own URL updates.
    await page.goto('about:blank')
    await page.goto(`${server.http}/ui/#/revision?rev=${v2}`)
    await page
      .getByTestId('revision')
      .filter({ hasText: String(v2) })
      .waitFor()
    await page.keyboard.press(']')
    await page
      .getByTestId('revision')
      .filter({ hasText: String(v2 + 1) })
      .waitFor()
    await page.getByTestId('revision-events').locator('a', { hasText: '/app/notes' }).waitFor()
    expect(await page.getByTestId('revision-who').textContent()).to.equal('anonymous (node) via http')
  })

  it('is readable at phone width (no horizontal overflow) and the status view shows segments and cursors', async () => {
    await kv.commitCursor('ctrl-a', floor + 1)
    const phone = await open('#/status', { width: 390, height: 800 })
    await phone.getByTestId('status-summary').waitFor()
    await phone.locator('td', { hasText: 'ctrl-a' }).waitFor()
    await shot(phone, 'status-phone')
    const overflow = await phone.evaluate<number>(OVERFLOW)
    expect(overflow).to.be.at.most(1)
    await phone.goto(`${server.http}/ui/#/keys?prefix=/app/&key=/app/config`)
    await phone.getByTestId('value').waitFor()
    await phone.locator('.tree a', { hasText: 'notes' }).waitFor()
    await shot(phone, 'keys-phone')
    expect(await phone.evaluate<number>(OVERFLOW)).to.be.at.most(1)
    await phone.close()
  })

  it('logged no console errors or warnings in any view', () => {
    expect(problems).to.deep.equal([])
  })
})
