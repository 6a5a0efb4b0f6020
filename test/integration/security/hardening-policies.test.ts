/**
 * Every policy decides every message shape a client can send: a request, a notification (no id),
 * a response to a server request, and a batch. A shape that skips a policy is a bypass (issue 17:
 * a `tools/call` notification for a tool hidden by --tools reached the server). Real proxy, real
 * MCP SDK backend, a real webhook server, audit lines read back from the file.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../../src/audit/event.js';
import type { RunConfigInput } from '../../../src/config/runconfig.js';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { startV1StreamableBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';
import { INIT_BODY, memoryLogger, post, testConfig } from '../../support/proxy-harness.js';

const AUTHZ = {
  version: '1.0',
  type: 'cedarv1',
  cedar: { policies: ['permit(principal, action == Action::"call_tool", resource == Tool::"echo");'] },
};

const hiddenCall = { jsonrpc: '2.0', method: 'tools/call', params: { name: 'secret', arguments: {} } };

interface Stack {
  backend: HttpBackendServer;
  proxy: RunningProxy;
  auditFile: string;
  session: Record<string, string>;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'moat-hardening-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function startStack(overrides: Partial<RunConfigInput>): Promise<Stack> {
  const backend = await startV1StreamableBackend({ json: true });
  const auditFile = join(dir, `audit-${Math.random().toString(36).slice(2)}.log`);
  const proxy = await startProxy(
    testConfig({ audit_config: { component: 'hardening', logFile: auditFile }, ...overrides }),
    { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
    { logger: memoryLogger().logger },
  );
  const init = await post(`${proxy.url}/mcp`, INIT_BODY);
  const id = init.headers.get('mcp-session-id') ?? '';
  expect(id).not.toBe('');
  const session = { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' };
  await post(`${proxy.url}/mcp`, { jsonrpc: '2.0', method: 'notifications/initialized' }, session);
  return { backend, proxy, auditFile, session };
}

async function stopStack(s: Stack | undefined): Promise<void> {
  await s?.proxy.close();
  await s?.backend.close();
}

async function auditEvents(s: Stack): Promise<AuditEvent[]> {
  // The audit file is written asynchronously after the answer.
  for (let i = 0; i < 50; i++) {
    const text = await readFile(s.auditFile, 'utf8').catch(() => '');
    const events = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditEvent);
    if (events.some((e) => e.outcome === 'denied')) return events;
    await new Promise((r) => setTimeout(r, 50));
  }
  return [];
}

describe.each([
  ['tool filter', { tools_filter: ['echo'] }],
  ['authorization', { authz_config: AUTHZ }],
])('%s decides every message shape', (_name, overrides) => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack(overrides);
  });
  afterAll(() => stopStack(s));

  it('refuses a tools/call notification for a hidden tool before the server sees it', async () => {
    const before = s.backend.seen.length;
    const res = await post(`${s.proxy.url}/mcp`, hiddenCall, s.session);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { message: expect.any(String) } });
    expect(s.backend.seen.length).toBe(before);
    const denied = (await auditEvents(s)).filter((e) => e.outcome === 'denied');
    expect(denied.some((e) => e.target.method === 'tools/call' && e.target.name === 'secret')).toBe(true);
  });

  it('refuses the same call sent as a request', async () => {
    const before = s.backend.seen.length;
    const res = await post(`${s.proxy.url}/mcp`, { ...hiddenCall, id: 7 }, s.session);
    expect(res.json).toMatchObject({ id: 7, error: { message: expect.stringContaining('secret') } });
    expect(s.backend.seen.length).toBe(before);
  });

  it('refuses a batch hiding the call among allowed messages', async () => {
    const before = s.backend.seen.length;
    const batch = [
      { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } },
      hiddenCall,
    ];
    for (const version of ['2025-03-26', '2025-11-25']) {
      const res = await post(`${s.proxy.url}/mcp`, batch, { ...s.session, 'mcp-protocol-version': version });
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ error: { code: -32600 } });
    }
    expect(s.backend.seen.length).toBe(before);
  });
});

describe('validating webhook sees every message shape', () => {
  let s: Stack;
  let hook: Server;
  const reviewed: Array<Record<string, unknown>> = [];
  beforeAll(async () => {
    hook = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          uid: string;
          mcp_request: Record<string, unknown>;
        };
        reviewed.push(review.mcp_request);
        // Refuses everything but the handshake, so any shape that skips the webhook gets through.
        const method = review.mcp_request.method;
        const allowed = method === 'initialize' || method === 'notifications/initialized';
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ version: 'v0.1.0', uid: review.uid, allowed }));
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/review`;
    s = await startStack({
      validating_webhooks: [{ name: 'guard', url, failure_policy: 'fail' }],
    });
  });
  afterAll(async () => {
    await stopStack(s);
    await new Promise<void>((resolve) => {
      hook.closeAllConnections();
      hook.close(() => resolve());
    });
  });

  it('asks about a notification and refuses it', async () => {
    const res = await post(`${s.proxy.url}/mcp`, hiddenCall, s.session);
    expect(res.status).toBe(403);
    expect(reviewed.at(-1)).toMatchObject({ method: 'tools/call' });
  });

  it('asks about a response to a server request and refuses it', async () => {
    const before = s.backend.seen.length;
    const answer = { jsonrpc: '2.0', id: 'srv-1', result: { action: 'accept', content: { ok: true } } };
    const res = await post(`${s.proxy.url}/mcp`, answer, s.session);
    expect(res.status).toBe(403);
    expect(reviewed.at(-1)).toMatchObject({ id: 'srv-1', result: { action: 'accept' } });
    expect(s.backend.seen.length).toBe(before);
  });
});
