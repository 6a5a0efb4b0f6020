/**
 * The dashboard's audit user filter and its metrics page, in real headless Chromium against the
 * real `moat ui`: remote workloads (the host MCP server) behind real proxies, one with OIDC from a
 * real provider (two users) and audit on, one serving Prometheus `/metrics`.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardInChromium, rawRequest, type DashboardInChromium } from '../../support/dashboard.js';
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
/** The registry entry the registry page runs: a loopback remote that needs a secret variable and a header. */
const ENTRY = 'io.moat-test/ui-remote';
const RUN_NAME = uniqueName('uig');
const TYPED_KEY = 'typed-secret-5150';
/** The AI clients' home (their config files) of the dashboard and of the CLI calls that change them. */
const clientHome = mkdtempSync(join(tmpdir(), 'moat-ui-clients-'));
const ENV = { MOAT_SECRETS_PASSWORD: 'ui-test-password', HOME: clientHome };
const GROUP = uniqueName('uigroup');
const GROUPED = uniqueName('uigw');

function registryDocument(): unknown {
  return {
    servers: [
      {
        name: ENTRY,
        description: 'A loopback server for the dashboard <img src=x onerror="globalThis.pwned=1">',
        remotes: [
          {
            type: 'streamable-http',
            url: remote.url,
            headers: [
              {
                name: 'X-Api-Key',
                value: 'key={key}',
                variables: { key: { description: 'the API key', isRequired: true, isSecret: true } },
              },
              { name: 'X-Team', description: 'your team', isRequired: true },
            ],
          },
        ],
      },
    ],
  };
}

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
  const registryFile = join(home, 'registry.json');
  writeFileSync(registryFile, JSON.stringify(registryDocument()));
  await moatOk(home, ['config', 'set-registry', registryFile]);
  ui = await dashboardInChromium(home, ENV);
}, 300_000);

afterAll(async () => {
  await ui?.close();
  await idp?.close();
  rmSync(clientHome, { recursive: true, force: true });
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

describe('moat ui registry page in Chromium', { timeout: 300_000 }, () => {
  it('searches the registry as moat search does', async () => {
    await ui.page.goto(`${ui.dashboard.url}registry`);
    await ui.page.locator('main[data-state="live"]').waitFor({ timeout: WAIT_MS });
    expect(await ui.page.locator('tr[data-entry]').count()).toBeGreaterThan(1); // the catalog too
    await ui.page.getByLabel('Search the registry').fill('dashboard');
    await ui.page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => ui.page.locator('tr[data-entry]').count(), { timeout: WAIT_MS }).toBe(1);
    const row = ui.page.locator(`tr[data-entry="${ENTRY}"]`);
    expect(await row.locator('td').first().textContent()).toBe(
      'A loopback server for the dashboard <img src=x onerror="globalThis.pwned=1">',
    );
    expect(await ui.page.evaluate('globalThis.pwned')).toBeUndefined();
    expect(await row.locator('td.url').textContent()).toBe(remote.url);
  });

  it('asks for the variables an entry needs (the secret without echo) and runs it', async () => {
    await ui.page.getByRole('button', { name: `Run ${ENTRY}`, exact: true }).click();
    const form = ui.page.getByRole('form', { name: `Run ${ENTRY}` });
    const key = form.getByLabel('key (variable, secret)');
    const team = form.getByLabel('X-Team (header)');
    expect(await key.getAttribute('type')).toBe('password');
    expect(await team.getAttribute('type')).toBe('text');
    await form.getByLabel('Workload name (optional)').fill(RUN_NAME);
    await key.fill(TYPED_KEY);
    await team.fill('ops');
    await ui.page.screenshot({ path: join(ui.screens, 'registry.png'), fullPage: true });
    await form.getByRole('button', { name: `Run ${ENTRY}` }).click();
    const ran = ui.page.locator('form[data-state]');
    await ran.waitFor({ timeout: WAIT_MS * 2 });
    expect(await ran.getAttribute('data-state'), (await ran.locator('p.output').textContent()) ?? '').toBe(
      'done',
    );
    expect(await key.inputValue()).toBe('');
    expect((await workload(home, RUN_NAME))?.status).toBe('running');

    const file = join(home, `${RUN_NAME}.json`);
    await moatOk(home, ['export', RUN_NAME, file]);
    const exported = readFileSync(file, 'utf8');
    expect(exported).not.toContain(TYPED_KEY);
    expect(exported).toContain('ui-remote-x-api-key');
    expect(exported).toContain('"X-Team": "ops"');
    expect(await ui.page.locator('body').textContent()).not.toContain(TYPED_KEY);
  });

  it('refuses a run without a required value, naming it', async () => {
    const result = await ui.page.evaluate(async (server) => {
      const response = await fetch('/api/registry/run', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ server, values: { 'header:X-Team': 'ops' } }),
      });
      return { status: response.status, body: (await response.json()) as { message: string } };
    }, ENTRY);
    expect(result).toEqual({ status: 400, body: { ok: false, message: 'key is required' } });
  });
});

describe('moat ui clients and groups pages in Chromium', { timeout: 300_000 }, () => {
  beforeAll(async () => {
    mkdirSync(join(clientHome, '.cursor')); // Cursor is installed; the other clients are not
    await moatOk(home, ['group', 'create', GROUP], ENV);
    await moatOk(home, ['run', remote.url, '--name', GROUPED, '--group', GROUP], ENV);
    await moatOk(home, ['client', 'register', 'cursor', '--group', GROUP], ENV);
  }, 300_000);

  it('shows which clients are detected and which workloads each is configured for', async () => {
    await ui.page.goto(`${ui.dashboard.url}clients`);
    const cursor = ui.page.locator('tr[data-entry="cursor"]');
    await expect.poll(() => cursor.locator('td.workloads').textContent(), { timeout: WAIT_MS }).toBe(GROUPED);
    expect(await cursor.getAttribute('data-state')).toBe('installed');
    expect(await cursor.locator('td.groups').textContent()).toBe(GROUP);
    expect(await cursor.locator('td.url').textContent()).toBe(join(clientHome, '.cursor', 'mcp.json'));
    expect(await cursor.locator('td.client-state').textContent()).toBe('in sync');
    expect(await ui.page.locator('tr[data-entry="codex"]').getAttribute('data-state')).toBe('absent');
    expect(await ui.page.getByRole('status').textContent()).toMatch(/^1 of \d+ clients detected/);
    await ui.page.screenshot({ path: join(ui.screens, 'clients.png'), fullPage: true });
  });

  it('shows the workloads by group with their registered clients, following the CLI live', async () => {
    await ui.page.goto(`${ui.dashboard.url}groups`);
    const group = ui.page.getByRole('region', { name: `Group ${GROUP}` });
    const member = group.locator(`li[data-workload="${GROUPED}"]`);
    await member.and(ui.page.locator('[data-state="running"]')).waitFor({ timeout: WAIT_MS });
    expect(await group.locator('li[data-workload]').count()).toBe(1);
    expect(await group.locator('p.clients').textContent()).toBe('Clients: cursor');
    const defaults = ui.page.getByRole('region', { name: 'Group default' });
    expect(await defaults.locator(`li[data-workload="${METERED}"]`).count()).toBe(1);
    await ui.page.screenshot({ path: join(ui.screens, 'groups.png'), fullPage: true });
    await moatOk(home, ['stop', GROUPED], ENV);
    await member.and(ui.page.locator('[data-state="stopped"]')).waitFor({ timeout: WAIT_MS });
  });
});

describe("the new pages' routes behind the gate, over HTTP", { timeout: 120_000 }, () => {
  const paths = [
    'metrics',
    'api/metrics',
    'registry',
    'api/registry?q=x',
    'clients',
    'api/clients',
    'groups',
    'api/groups',
  ];

  async function sessionCookie(): Promise<string> {
    const cookie = (await ui.browser.context.cookies(ui.dashboard.url)).find(
      (c) => c.name === 'moat_ui_session',
    );
    return `${cookie!.name}=${cookie!.value}`;
  }

  it('answers 401 without the session cookie and 403 to a foreign Host, 200 otherwise', async () => {
    const cookie = await sessionCookie();
    const port = new URL(ui.dashboard.url).port;
    for (const path of paths) {
      const url = ui.dashboard.url + path;
      expect((await rawRequest(url)).status, path).toBe(401);
      const rebound = await rawRequest(url, { headers: { cookie, host: `rebound.example:${port}` } });
      expect(rebound.status, path).toBe(403);
      const foreign = await rawRequest(url, { headers: { cookie, origin: 'http://rebound.example' } });
      expect(foreign.status, path).toBe(403);
      expect((await rawRequest(url, { headers: { cookie } })).status, path).toBe(200);
    }
  });

  it('runs a registry entry only for a JSON POST with the session cookie and its own Origin', async () => {
    const cookie = await sessionCookie();
    const origin = ui.dashboard.url.slice(0, -1);
    const run = `${ui.dashboard.url}api/registry/run`;
    const body = JSON.stringify({
      server: ENTRY,
      name: 'never-run',
      values: { 'variable:key': 'k', 'header:X-Team': 't' },
    });
    const json = { 'content-type': 'application/json' };
    const attempts: Array<[string, Record<string, string>, number]> = [
      ['no cookie', { ...json, origin }, 401],
      ['no Origin', { ...json, cookie }, 403],
      ['foreign Origin', { ...json, cookie, origin: 'http://evil.example' }, 403],
      ['a form post', { 'content-type': 'application/x-www-form-urlencoded', cookie, origin }, 415],
    ];
    for (const [what, headers, status] of attempts)
      expect((await rawRequest(run, { method: 'POST', headers, body })).status, what).toBe(status);
    expect((await rawRequest(run, { headers: { cookie } })).status).toBe(404);
    expect(await workload(home, 'never-run')).toBeUndefined();
  });
});
