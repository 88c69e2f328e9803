/**
 * The history browser with auth on, in a real headless Chromium against a real `kvlog serve`: the login
 * form, the keys a user may read, the live watch carrying the token, a missing permission shown as such,
 * log out, and a token the server ends (a password change) taking the page back to the login form.
 */
import { existsSync } from 'node:fs'
import { expect } from 'chai'
import { chromium, type Browser, type Page } from 'playwright-core'
import { KvlogClient } from '../../../clients/index.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'

const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium'

describe('history browser /ui with auth on (real Chromium)', function () {
  this.timeout(60_000)
  let server: ServerProcess
  let root: KvlogClient
  let browser: Browser
  let page: Page
  const problems: string[] = []

  before(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_BIN)`)
    ;[server, browser] = await Promise.all([
      startServerProcess(),
      chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] }),
    ])
    const admin = new KvlogClient({ endpoint: server.http })
    await admin.put('/app/config', 'v1')
    await admin.put('/secret/key', 's')
    await admin.auth.addUser('root', 'rootpw')
    await admin.auth.grantRole('root', 'root')
    await admin.auth.addRole('app-reader')
    await admin.auth.grantPermission('app-reader', 'READ', '/app/', { prefix: true })
    await admin.auth.addUser('alice', 'alicepw')
    await admin.auth.grantRole('alice', 'app-reader')
    await admin.auth.addRole('reader')
    await admin.auth.grantPermission('reader', 'READ', '\u0000', { fromKey: true })
    await admin.auth.addUser('viewer', 'viewerpw')
    await admin.auth.grantRole('viewer', 'reader')
    await admin.auth.enable()
    root = new KvlogClient({ endpoint: server.http, credentials: { user: 'root', password: 'rootpw' } })
    page = await browser.newPage({ viewport: { width: 1200, height: 800 } })
    page.on('console', (m) => {
      // The browser logs every refused request itself; those refusals are what this test provokes.
      if (/status of 40[13]/.test(m.text())) return
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`)
    })
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`))
  })

  after(async () => {
    await browser?.close()
    await server?.cleanup()
  })

  const logIn = async (user: string, password: string) => {
    await page.locator('#login-user').fill(user)
    await page.locator('#login-password').fill(password)
    await page.locator('#login-password').press('Enter')
  }

  it('opens on the login form; a wrong password is refused as UNAUTHENTICATED', async () => {
    await page.goto(`${server.http}/ui/#/keys?prefix=/app/&key=/app/config`)
    await page.locator('#login-user').waitFor()
    await logIn('alice', 'wrong')
    await page.locator('[data-code="UNAUTHENTICATED"]').waitFor()
    expect(await page.getByTestId('user').count()).to.equal(0)
  })

  it('logs in and shows the keys the user may read, with who is logged in', async () => {
    await logIn('alice', 'alicepw')
    await page.getByTestId('user').filter({ hasText: 'alice' }).waitFor()
    await page.getByTestId('value').filter({ hasText: 'v1' }).waitFor()
    await page.locator('.tree a[data-leaf="true"]', { hasText: 'config' }).waitFor()
  })

  it('keys the user may not read say PERMISSION_DENIED, and the page carries on', async () => {
    await page.goto(`${server.http}/ui/#/keys?prefix=/secret/&key=/secret/key`)
    await page.locator('[data-code="PERMISSION_DENIED"]').first().waitFor()
    expect(await page.locator('[data-code="ERROR"]').count()).to.equal(0)
    expect(await page.getByTestId('user').textContent()).to.equal('alice')
  })

  it('a user who may not read every key is told so on the landing page, not shown a crash', async () => {
    await page.goto(`${server.http}/ui/#/timeline`)
    await page.locator('[data-code="PERMISSION_DENIED"]').first().waitFor()
    await page.locator('[data-testid="live"][data-code="PERMISSION_DENIED"]').waitFor()
  })

  it('a token the server ends (password changed) goes back to the login form, saying so', async () => {
    await page.goto(`${server.http}/ui/#/status`)
    await page.getByTestId('status-summary').waitFor()
    await root.auth.changePassword('alice', 'alicepw2')
    await page.getByTestId('session-expired').waitFor()
    await page.locator('#login-user').waitFor()
    await logIn('viewer', 'viewerpw')
    await page.getByTestId('user').filter({ hasText: 'viewer' }).waitFor()
    await page.getByTestId('status-summary').waitFor()
  })

  it('the live watch carries the token: the landing page lists the history and then a new write', async () => {
    await page.goto(`${server.http}/ui/#/timeline`)
    await page.getByTestId('recent').locator('a', { hasText: '/secret/key' }).waitFor()
    await page.getByTestId('live').filter({ hasText: 'live' }).waitFor()
    await root.put('/app/live', 'now')
    await page.getByTestId('recent').locator('li', { hasText: '/app/live' }).getByTestId('recent-who').filter({ hasText: 'root' }).waitFor()
  })

  it('logs out: the login form again, and the token is gone from the tab', async () => {
    await page.getByTestId('logout').click()
    await page.locator('#login-user').waitFor()
    expect(await page.evaluate<string | null>("sessionStorage.getItem('kvlog.session')")).to.equal(null)
    await page.reload()
    await page.locator('#login-user').waitFor()
  })

  it('logged no console errors or warnings', () => {
    expect(problems).to.deep.equal([])
  })
})
