/**
 * `moat ui` against a real Moat: workloads in Podman (the stdio test server) and a remote one,
 * the dashboard started by the real CLI, driven by real headless Chromium. The page must show
 * every workload, follow stop/start/remove made in the page and by the CLI without a reload,
 * and the gate must refuse what is not the dashboard's own (HTTP tests at the end).
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, type TestBrowser } from '../../support/browser.js';
import { rawRequest, screenshotDir, startDashboard, type Dashboard } from '../../support/dashboard.js';
import { testHostServer } from '../../support/host-server.js';
import { HOSTILE_DESCRIPTION, HOSTILE_TOOL, testHostileServer } from '../../support/hostile-server.js';
import { testServerImage } from '../../support/images.js';
import { callTool, moatOk, testMoatHome, workload } from '../../support/moat-cli.js';
import { uniqueName } from '../../support/podman.js';

const home = testMoatHome();
const remote = testHostServer();
const hostile = testHostileServer();
const NAME = uniqueName('uiw');
const REMOTE = uniqueName('uir');
const HOSTILE = uniqueName('uih');
/** A remote workload (no Podman on its path) with audit on and only `echo` exposed. */
const AUDITED = uniqueName('uia');
/** A start or stop of a container workload on a busy machine. */
const CHANGE_MS = 120_000;

let dashboard: Dashboard;
let browser: TestBrowser;
let page: Page;
let screens: string;

function row(name: string, state?: string): string {
  return `tr[data-workload="${name}"]${state ? `[data-state="${state}"]` : ''}`;
}

/** Waits for the workload's row to show `state`; on timeout says what the page showed instead. */
async function rowState(name: string, state: string): Promise<void> {
  try {
    await page.locator(row(name, state)).waitFor({ timeout: CHANGE_MS });
  } catch (err) {
    const shown = await page
      .locator(row(name))
      .textContent()
      .catch(() => '(no row)');
    const status = await page
      .locator('#status')
      .textContent()
      .catch(() => '');
    throw new Error(`${name} did not become ${state}: row "${shown}", status "${status}"`, { cause: err });
  }
}

async function sessionCookie(): Promise<string> {
  const cookie = (await browser.context.cookies(dashboard.url)).find((c) => c.name === 'moat_ui_session');
  if (!cookie) throw new Error('no session cookie');
  return `${cookie.name}=${cookie.value}`;
}

beforeAll(async () => {
  const image = await testServerImage('stdio-server');
  await moatOk(home, ['run', '--transport', 'stdio', '--name', NAME, image]);
  await moatOk(home, ['run', remote.url, '--name', REMOTE]);
  await moatOk(home, ['run', remote.url, '--name', AUDITED, '--enable-audit', '--tools', 'echo']);
  dashboard = await startDashboard(home);
  browser = await launchChromium();
  page = await browser.context.newPage();
  screens = screenshotDir();
  console.log(`moat ui screenshots: ${screens}`);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await dashboard?.stop();
});

describe('moat ui in Chromium', { timeout: 300_000 }, () => {
  it('opens with the one-time link, which becomes an HttpOnly SameSite=Strict cookie and is spent', async () => {
    const response = await page.goto(dashboard.loginUrl);
    expect(response?.status()).toBe(200);
    expect(page.url()).toBe(dashboard.url); // the token left the address bar
    const [cookie] = await browser.context.cookies(dashboard.url);
    expect(cookie).toMatchObject({ name: 'moat_ui_session', httpOnly: true, sameSite: 'Strict' });
    expect(await page.evaluate('document.cookie')).toBe('');
    expect((await rawRequest(dashboard.loginUrl)).status).toBe(401);
  });

  it('shows every workload with its state, health, transport, URL, group and uptime', async () => {
    const url = (await workload(home, NAME))?.url;
    const line = page.locator(row(NAME, 'running'));
    await line.waitFor({ timeout: CHANGE_MS });
    const cells = await line.locator('th, td').allTextContents();
    expect(cells.slice(0, 6)).toEqual([NAME, 'running', 'healthy', 'stdio', url, 'default']);
    expect(cells[6]).toMatch(/^\d+[smhd]/);
    await rowState(REMOTE, 'running');
    await page.screenshot({ path: join(screens, 'workloads.png'), fullPage: true });
  });

  it('stops and starts a workload from the page; the row follows without a reload', async () => {
    await page.evaluate(() => ((globalThis as unknown as { sameDocument: boolean }).sameDocument = true));
    await page.getByRole('button', { name: `stop ${NAME}`, exact: true }).click();
    await rowState(NAME, 'stopped');
    expect((await workload(home, NAME))?.status).toBe('stopped');
    await page.getByRole('button', { name: `start ${NAME}`, exact: true }).click();
    await rowState(NAME, 'running');
    expect((await workload(home, NAME))?.status).toBe('running');
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/running/);
    expect(
      await page.evaluate(() => (globalThis as unknown as { sameDocument?: boolean }).sameDocument),
    ).toBe(true);
  });

  it('follows what the CLI does, without a reload', async () => {
    await moatOk(home, ['stop', NAME]);
    await rowState(NAME, 'stopped');
    await moatOk(home, ['start', NAME]);
    await rowState(NAME, 'running');
    expect(
      await page.evaluate(() => (globalThis as unknown as { sameDocument?: boolean }).sameDocument),
    ).toBe(true);
  });

  it('removes a workload only after the confirmation, reachable by keyboard', async () => {
    await page.getByRole('button', { name: `remove ${REMOTE}`, exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Confirm removal' });
    await dialog.waitFor();
    // Cancel has the focus: Enter keeps the workload.
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'hidden' });
    expect(await workload(home, REMOTE)).toBeDefined();

    await page.getByRole('button', { name: `remove ${REMOTE}`, exact: true }).focus();
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.locator(row(REMOTE)).waitFor({ state: 'detached', timeout: CHANGE_MS });
    expect(await workload(home, REMOTE)).toBeUndefined();
  });
});

describe("moat ui: one workload's page in Chromium", { timeout: 300_000 }, () => {
  it('lists the tools through the proxy and calls one from the form built from its schema', async () => {
    await page.goto(dashboard.url);
    await page.getByRole('link', { name: NAME, exact: true }).click();
    await page.waitForURL(`${dashboard.url}workloads/${NAME}`);
    await page.locator('main[data-tools="loaded"]').waitFor({ timeout: CHANGE_MS });
    const panel = page.locator('details.tool-panel', {
      has: page.locator('code.tool-name', { hasText: /^echo$/ }),
    });
    await panel.locator('summary').click();
    await panel.getByLabel('text (required)').fill('hello from the form');
    await panel.getByRole('button', { name: 'Call' }).click();
    await expect
      .poll(() => panel.locator('.result pre').textContent(), { timeout: CHANGE_MS })
      .toBe('hello from the form');

    await page.getByRole('button', { name: 'Show', exact: true }).click();
    await expect.poll(() => page.locator('pre.runconfig').textContent()).toContain(`"name": "${NAME}"`);
    expect(await page.getByRole('link', { name: `Export ${NAME}.json` }).getAttribute('href')).toBe(
      `/api/workloads/${NAME}/runconfig?download=1`,
    );
    await page.screenshot({ path: join(screens, 'workload.png'), fullPage: true });
  });

  it('tails the proxy log live: lines written after the page opened arrive', async () => {
    await page.goto(`${dashboard.url}workloads/${AUDITED}`);
    const log = page.getByRole('log', { name: 'Log lines' });
    await expect.poll(() => log.textContent(), { timeout: CHANGE_MS }).toContain('workload running');
    const starts = async () => ((await log.textContent()) ?? '').split('supervisor started').length - 1;
    const before = await starts();
    await moatOk(home, ['restart', AUDITED]);
    await expect.poll(starts, { timeout: CHANGE_MS }).toBe(before + 1);
    await page.locator(`main[data-state="running"]`).waitFor({ timeout: CHANGE_MS });
  });

  it('lists audit events with filters, and a denied call with the policy that refused it', async () => {
    const url = (await workload(home, AUDITED))!.url;
    expect(await callTool(url, 'echo', { text: 'allowed' })).toBe('allowed');
    await expect(callTool(url, 'get_env', { name: 'HOME' })).rejects.toThrow();
    await page.goto(`${dashboard.url}audit`);
    await page.getByLabel('Workload').fill(AUDITED);
    await page.getByLabel('Decision').selectOption('denied');
    const denied = page.locator(`tr[data-workload="${AUDITED}"][data-state="denied"]`);
    await denied.first().waitFor({ timeout: CHANGE_MS });
    const cells = await denied.first().locator('td').allTextContents();
    expect(cells.slice(3, 6)).toEqual(['mcp_tool_call', 'get_env', 'denied']);
    expect(cells[6]).toMatch(/^denied by \S+ \(HTTP \d{3}\)$/);
    expect(await page.locator(`tr[data-workload="${AUDITED}"][data-state="success"]`).count()).toBe(0);
    await page.screenshot({ path: join(screens, 'audit.png'), fullPage: true });

    await page.getByLabel('Decision').selectOption('');
    await page.getByLabel('Tool').fill('echo');
    const allowed = page.locator(`tr[data-workload="${AUDITED}"][data-state="success"]`);
    await allowed.first().waitFor({ timeout: CHANGE_MS });
    await expect
      .poll(() => page.locator(`tr[data-workload="${AUDITED}"][data-state="denied"]`).count())
      .toBe(0);
  });

  it("renders a hostile server's tool name, description, schema and results inert: no script runs", async () => {
    await moatOk(home, ['run', hostile.url, '--name', HOSTILE]);
    const tab = await browser.context.newPage();
    // Installed before the page's own script: records every Content-Security-Policy violation.
    await tab.addInitScript(
      "globalThis.cspViolations = []; document.addEventListener('securitypolicyviolation', (e) => globalThis.cspViolations.push(e.violatedDirective));",
    );
    const dialogs: string[] = [];
    tab.on('dialog', (d) => void dialogs.push(d.message()));
    await tab.goto(`${dashboard.url}workloads/${HOSTILE}`);
    await tab.locator('main[data-tools="loaded"]').waitFor({ timeout: CHANGE_MS });
    const panel = tab.locator('details.tool-panel');
    expect(await panel.locator('summary').textContent()).toBe(`${HOSTILE_TOOL} — ${HOSTILE_DESCRIPTION}`);
    await panel.locator('summary').click();
    await panel.locator('input[type="text"]').fill('x');
    await panel.getByRole('button', { name: 'Call' }).click();
    const result = panel.getByRole('region', { name: 'Tool result' });
    await result.waitFor({ timeout: CHANGE_MS });
    expect(await result.locator('pre').first().textContent()).toContain(
      '<script>globalThis.pwned=2</script>',
    );
    expect(await result.textContent()).toContain('Resource link: javascript:globalThis.pwned=4');
    expect(await result.textContent()).toContain('image of type "image/svg+xml" not shown');
    const images = await tab.locator('img').evaluateAll((els) => els.map((e) => e.getAttribute('src')));
    expect(images).toHaveLength(1);
    expect(images[0]).toMatch(/^data:image\/png;base64,/);
    expect(await tab.locator('a[href^="javascript:"], script:not([src])').count()).toBe(0);
    await tab.screenshot({ path: join(screens, 'hostile.png'), fullPage: true });

    expect(await tab.evaluate('globalThis.pwned')).toBeUndefined();
    expect(await tab.evaluate('globalThis.cspViolations')).toEqual([]);
    expect(dialogs).toEqual([]);
    // The detector works: markup injected by hand is blocked by the policy, and reported.
    await tab.evaluate(
      `document.body.insertAdjacentHTML('beforeend', '<img src="data:," onerror="globalThis.pwned=9">')`,
    );
    await expect.poll(() => tab.evaluate('globalThis.cspViolations.length')).toBeGreaterThan(0);
    expect(await tab.evaluate('globalThis.pwned')).toBeUndefined();
    await tab.close();
  });
});

describe('moat ui gate over HTTP', { timeout: 120_000 }, () => {
  it('answers 401 without the session cookie, on pages, data and assets', async () => {
    for (const path of ['', 'api/workloads/events', 'assets/app.js']) {
      expect((await rawRequest(dashboard.url + path)).status, path).toBe(401);
    }
    const wrong = await rawRequest(`${dashboard.url}?token=not-the-token`);
    expect(wrong.status).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
  });

  it('answers 403 to a Host or Origin that is not the dashboard (DNS rebinding), even with the cookie', async () => {
    const cookie = await sessionCookie();
    const port = new URL(dashboard.url).port;
    const foreignHost = await rawRequest(dashboard.url, {
      headers: { cookie, host: `rebound.example:${port}` },
    });
    expect(foreignHost.status).toBe(403);
    const otherPort = await rawRequest(dashboard.url, { headers: { cookie, host: `127.0.0.1:1` } });
    expect(otherPort.status).toBe(403);
    const foreignOrigin = await rawRequest(dashboard.url, {
      headers: { cookie, origin: 'http://rebound.example' },
    });
    expect(foreignOrigin.status).toBe(403);
    const ok = await rawRequest(dashboard.url, { headers: { cookie } });
    expect(ok.status).toBe(200);
  });

  it('refuses a state change without the cookie, without or with a foreign Origin, or not as JSON', async () => {
    const cookie = await sessionCookie();
    const origin = dashboard.url.slice(0, -1);
    const stop = `${dashboard.url}api/workloads/${NAME}/stop`;
    const json = { 'content-type': 'application/json' };
    const attempts: Array<[string, Record<string, string>, number, string]> = [
      ['no cookie', { ...json, origin }, 401, 'POST'],
      ['no Origin', { ...json, cookie }, 403, 'POST'],
      ['foreign Origin', { ...json, cookie, origin: 'http://evil.example' }, 403, 'POST'],
      ['a form post', { 'content-type': 'application/x-www-form-urlencoded', cookie, origin }, 415, 'POST'],
      ['GET', { cookie }, 404, 'GET'],
    ];
    for (const [what, headers, status, method] of attempts) {
      const response = await rawRequest(stop, {
        method,
        headers,
        body: method === 'POST' ? '{}' : undefined,
      });
      expect(response.status, what).toBe(status);
    }
    expect((await workload(home, NAME))?.status).toBe('running');
  });

  it('serves every answer with a strict Content-Security-Policy and no inline script', async () => {
    const cookie = await sessionCookie();
    const page = await rawRequest(dashboard.url, { headers: { cookie } });
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(page.body).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/);
    expect((await rawRequest(dashboard.url)).headers['content-security-policy']).toBe(csp);
  });
});
