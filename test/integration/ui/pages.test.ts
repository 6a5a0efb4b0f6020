/**
 * The dashboard's audit user filter and its metrics page, in real headless Chromium against the
 * real `moat ui`: remote workloads (the host MCP server) behind real proxies, one with OIDC from a
 * real provider (two users) and audit on, one serving Prometheus `/metrics`.
 */
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardInChromium, type DashboardInChromium } from '../../support/dashboard.js';
import { testHostServer } from '../../support/host-server.js';
import { callTool, moatOk, testMoatHome, workload } from '../../support/moat-cli.js';
import { oidcRunFlags, startTestOidcProvider, type TestOidcProvider } from '../../support/oidc.js';
import { uniqueName } from '../../support/podman.js';

const home = testMoatHome();
const remote = testHostServer();
/** OIDC (users Alice and Bob), audit on. */
const AUTHED = uniqueName('uiu');
/** Prometheus `/metrics` on its diagnostics port; only `echo` exposed, so other calls fail. */
const METERED = uniqueName('uim');
const WAIT_MS = 90_000;

let idp: TestOidcProvider;
let ui: DashboardInChromium;

/** One tool call as `user` (a bearer token from the provider), through a real MCP SDK client. */
async function callAs(user: string, url: string, text: string): Promise<void> {
  const client = new Client({ name: 'moat-ui-test', version: '1' });
  const headers = { authorization: `Bearer ${await idp.token(user)}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  try {
    await client.callTool({ name: 'echo', arguments: { text } });
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  idp = await startTestOidcProvider([
    { id: 'alice', name: 'Alice Liddell' },
    { id: 'bob', name: 'Bob Builder' },
  ]);
  await moatOk(home, ['run', remote.url, '--name', AUTHED, '--enable-audit', ...oidcRunFlags(idp)]);
  await moatOk(home, [
    'run',
    remote.url,
    '--name',
    METERED,
    '--tools',
    'echo',
    '--otel-enable-prometheus-metrics-path',
    '--otel-metrics-on-transport-port=false',
  ]);
  ui = await dashboardInChromium(home);
}, 300_000);

afterAll(async () => {
  await ui?.close();
  await idp?.close();
});

describe('moat ui audit filters in Chromium', { timeout: 300_000 }, () => {
  it("filters by user: each user's events and none of the other's", async () => {
    const url = (await workload(home, AUTHED))!.url;
    await callAs('alice', url, 'from alice');
    await callAs('bob', url, 'from bob');
    await ui.page.goto(`${ui.dashboard.url}audit`);
    await ui.page.getByLabel('Workload').fill(AUTHED);
    await ui.page.getByLabel('Tool').fill('echo');
    const rows = ui.page.locator(`tr[data-workload="${AUTHED}"]`);
    const users = async () => [...new Set(await rows.locator('td:nth-child(3)').allTextContents())].sort();
    await expect.poll(users, { timeout: WAIT_MS }).toEqual(['Alice Liddell', 'Bob Builder']);

    await ui.page.getByLabel('User').fill('alice'); // a case-insensitive substring
    await expect.poll(users, { timeout: WAIT_MS }).toEqual(['Alice Liddell']);
    await ui.page.screenshot({ path: join(ui.screens, 'audit-user.png'), fullPage: true });
    await ui.page.getByLabel('User').fill('Builder');
    await expect.poll(users, { timeout: WAIT_MS }).toEqual(['Bob Builder']);
    await ui.page.getByLabel('User').fill('nobody-called-this');
    await expect.poll(() => rows.count(), { timeout: WAIT_MS }).toBe(0);
    expect(await ui.page.getByRole('status').textContent()).toBe('0 events');
  });
});

describe('moat ui metrics page in Chromium', { timeout: 300_000 }, () => {
  it("shows a workload's requests, errors and latency from its proxy's /metrics as they happen", async () => {
    await ui.page.goto(`${ui.dashboard.url}metrics`);
    const row = ui.page.locator(`tr[data-workload="${METERED}"]`);
    // Read once before the traffic, so the traffic falls in the window's intervals.
    await ui.page.locator(`tr[data-workload="${METERED}"][data-state="on"]`).waitFor({ timeout: WAIT_MS });
    expect(await row.locator('td.requests').textContent()).toBe('0');
    // A workload without /metrics says how to get them.
    expect(await ui.page.locator(`tr[data-workload="${AUTHED}"]`).textContent()).toContain(
      '--otel-enable-prometheus-metrics-path',
    );

    const url = (await workload(home, METERED))!.url;
    for (let i = 0; i < 3; i++) expect(await callTool(url, 'echo', { text: `m${i}` })).toBe(`m${i}`);
    await expect(callTool(url, 'get_env', { name: 'HOME' })).rejects.toThrow();

    // Each call is initialize, its notification, tools/call: at least 12 requests, 1 error.
    const count = async (cell: string) => Number(await row.locator(cell).textContent());
    await expect.poll(() => count('td.requests'), { timeout: WAIT_MS }).toBeGreaterThanOrEqual(12);
    await expect.poll(() => count('td.errors'), { timeout: WAIT_MS }).toBeGreaterThanOrEqual(1);
    expect(await row.locator('td.latency').textContent()).toMatch(/^\d+(\.\d)? ms$/);
    expect(await row.locator('svg.chart rect.bar').count()).toBeGreaterThan(0);
    expect(await row.locator('svg.chart rect.bar-error').count()).toBeGreaterThan(0);
    expect(await row.getByRole('img').getAttribute('aria-label')).toMatch(
      new RegExp(`^${METERED}: \\d+ requests and [1-9]\\d* errors? in the last`),
    );
    await ui.page.screenshot({ path: join(ui.screens, 'metrics.png'), fullPage: true });
  });
});
