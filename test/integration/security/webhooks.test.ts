/**
 * Validating and mutating webhooks against real HTTP webhook servers started by the test, through
 * the real proxy with a real MCP SDK client and backend.
 */
import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Webhook } from '../../../src/config/runconfig.js';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { startV2StreamableBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';
import { INIT_BODY, memoryLogger, post, testConfig } from '../../support/proxy-harness.js';

interface Review {
  version: string;
  uid: string;
  timestamp: string;
  principal: { sub: string; groups: string[]; claims: Record<string, unknown> };
  mcp_request: { method: string; params?: Record<string, unknown>; id?: unknown };
  context: { server_name: string; source_ip: string; transport: string };
}

type Answer = (review: Review, res: ServerResponse) => void;

interface WebhookServer {
  url: string;
  reviews: Review[];
  headers: IncomingHttpHeaders[];
  answer: Answer;
  close(): Promise<void>;
}

const allow: Answer = (review, res) => reply(res, 200, { version: 'v0.1.0', uid: review.uid, allowed: true });

/** Answers tools/call reviews with `answer` (plus version and uid); everything else is allowed. */
const onToolCall =
  (answer: Record<string, unknown>, status = 200): Answer =>
  (review, res) =>
    review.mcp_request.method === 'tools/call'
      ? reply(res, status, { version: 'v0.1.0', uid: review.uid, ...answer })
      : allow(review, res);

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function startWebhookServer(): Promise<WebhookServer> {
  const hook: WebhookServer = {
    url: '',
    reviews: [],
    headers: [],
    answer: allow,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Review;
      hook.reviews.push(review);
      hook.headers.push(req.headers);
      hook.answer(review, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hook.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/review`;
  return hook;
}

let backend: HttpBackendServer;
let hookA: WebhookServer;
let hookB: WebhookServer;
let dir: string;
let running: RunningProxy[] = [];

beforeAll(async () => {
  backend = await startV2StreamableBackend();
  hookA = await startWebhookServer();
  hookB = await startWebhookServer();
  dir = await mkdtemp(join(tmpdir(), 'moat-webhooks-'));
});

afterEach(async () => {
  for (const r of running) await r.close();
  running = [];
  hookA.answer = allow;
  hookB.answer = allow;
  hookA.reviews.length = 0;
  hookB.reviews.length = 0;
  hookA.headers.length = 0;
});

afterAll(async () => {
  await backend.close();
  await hookA.close();
  await hookB.close();
  await rm(dir, { recursive: true, force: true });
});

const hook = (name: string, server: WebhookServer, extra: Partial<Webhook> = {}): Webhook => ({
  name,
  url: server.url,
  timeout: 5_000_000_000,
  failure_policy: 'fail',
  tls_config: { insecure_skip_verify: true },
  ...extra,
});

async function proxyWith(webhooks: { validating?: Webhook[]; mutating?: Webhook[] }): Promise<RunningProxy> {
  const config = testConfig({
    name: 'wx',
    ...(webhooks.validating ? { validating_webhooks: webhooks.validating } : {}),
    ...(webhooks.mutating ? { mutating_webhooks: webhooks.mutating } : {}),
  });
  const proxy = await startProxy(
    config,
    { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
    { logger: memoryLogger().logger },
  );
  running.push(proxy);
  return proxy;
}

async function client(proxy: RunningProxy): Promise<Client> {
  const c = new Client({ name: 'webhook-test', version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`)));
  return c;
}

async function callError(c: Client, name: string, args: Record<string, unknown>): Promise<string> {
  return c.callTool({ name, arguments: args }).then(
    () => 'no error',
    (err: unknown) => (err as Error).message,
  );
}

const firstText = (result: unknown): string =>
  ((result as { content: Array<{ text: string }> }).content[0] as { text: string }).text;

describe('validating webhooks', () => {
  it('sends the review request and lets an allowed call through', async () => {
    const proxy = await proxyWith({ validating: [hook('guard', hookA)] });
    const c = await client(proxy);
    try {
      expect(firstText(await c.callTool({ name: 'echo', arguments: { text: 'hi' } }))).toBe('hi');
    } finally {
      await c.close();
    }
    const review = hookA.reviews.find((r) => r.mcp_request.method === 'tools/call')!;
    expect(review).toMatchObject({
      version: 'v0.1.0',
      mcp_request: { method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
      context: { server_name: 'wx', source_ip: '127.0.0.1', transport: 'streamable-http' },
      principal: { groups: [] },
    });
    expect(review.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(review.timestamp)).not.toBeNaN();
    expect(typeof review.principal.sub).toBe('string');
    expect(hookA.reviews.map((r) => r.mcp_request.method)).toContain('initialize');
  });

  it('refuses a call the webhook denies, with its message', async () => {
    const proxy = await proxyWith({ validating: [hook('guard', hookA)] });
    hookA.answer = onToolCall({ allowed: false, code: 403, message: 'blocked', reason: 'PolicyDenied' });
    const c = await client(proxy);
    try {
      const message = await callError(c, 'echo', { text: 'hi' });
      expect(message).toMatch(/403/);
      expect(message).toContain('Request denied by webhook \\"guard\\": blocked');
    } finally {
      await c.close();
    }
  });

  it('treats an HTTP 422 answer as a denial whatever the failure policy', async () => {
    const proxy = await proxyWith({ validating: [hook('guard', hookA, { failure_policy: 'ignore' })] });
    hookA.answer = onToolCall({ error: 'no' }, 422);
    const c = await client(proxy);
    try {
      expect(await callError(c, 'echo', { text: 'x' })).toContain('Request denied by webhook');
    } finally {
      await c.close();
    }
  });

  it('applies the failure policy when the webhook does not answer in time', async () => {
    const silent: Answer = (review, res) => {
      if (review.mcp_request.method !== 'tools/call') return allow(review, res);
      // Never answers; the proxy's 1 s timeout must fire.
    };
    hookA.answer = silent;
    hookB.answer = silent;
    const failing = await proxyWith({ validating: [hook('slow', hookA, { timeout: 1_000_000_000 })] });
    const ignoring = await proxyWith({
      validating: [hook('slow-ok', hookB, { timeout: 1_000_000_000, failure_policy: 'ignore' })],
    });
    const c1 = await client(failing);
    const c2 = await client(ignoring);
    try {
      expect(await callError(c1, 'echo', { text: 'x' })).toContain('validating webhook \\"slow\\" failed');
      expect(firstText(await c2.callTool({ name: 'echo', arguments: { text: 'through' } }))).toBe('through');
    } finally {
      await c1.close();
      await c2.close();
    }
  });

  it('signs requests with HMAC-SHA256 over "<timestamp>.<body>"', async () => {
    const secretFile = join(dir, 'hmac');
    await writeFile(secretFile, 'webhook-shared-secret\n');
    let verified = 0;
    hookA.answer = (review, res) => {
      const headers = hookA.headers.at(-1)!;
      const body = JSON.stringify(review);
      const expected = `sha256=${createHmac('sha256', 'webhook-shared-secret')
        .update(`${String(headers['x-moat-timestamp'])}.${body}`)
        .digest('hex')}`;
      if (headers['x-moat-signature'] === expected && headers['x-toolhive-signature'] === expected)
        verified += 1;
      allow(review, res);
    };
    const proxy = await proxyWith({ validating: [hook('signed', hookA, { hmac_secret_ref: secretFile })] });
    const res = await post(`${proxy.url}/mcp`, INIT_BODY);
    expect(res.status).toBe(200);
    expect(verified).toBe(1);
  });
});

describe('mutating webhooks', () => {
  it('rewrites the request with a JSON Patch before validating webhooks see it', async () => {
    hookA.answer = onToolCall({
      allowed: true,
      patch_type: 'json_patch',
      patch: [{ op: 'replace', path: '/mcp_request/params/arguments/text', value: 'rewritten' }],
    });
    const proxy = await proxyWith({ mutating: [hook('rewrite', hookA)], validating: [hook('check', hookB)] });
    const c = await client(proxy);
    try {
      expect(firstText(await c.callTool({ name: 'echo', arguments: { text: 'original' } }))).toBe(
        'rewritten',
      );
    } finally {
      await c.close();
    }
    const seen = hookB.reviews.find((r) => r.mcp_request.method === 'tools/call')!;
    expect(seen.mcp_request.params).toEqual({ name: 'echo', arguments: { text: 'rewritten' } });
  });

  it('keeps Mcp-Method and Mcp-Name consistent with a rewritten body', async () => {
    hookA.answer = onToolCall({
      allowed: true,
      patch: [{ op: 'replace', path: '/mcp_request/params/name', value: 'echo' }],
    });
    const proxy = await proxyWith({ mutating: [hook('rename', hookA)] });
    const init = await post(`${proxy.url}/mcp`, INIT_BODY);
    const session = init.headers.get('mcp-session-id')!;
    const before = backend.seen.length;
    const res = await post(
      `${proxy.url}/mcp`,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'shout', arguments: { text: 'x' } } },
      {
        'mcp-session-id': session,
        'mcp-method': 'tools/call',
        'mcp-name': 'shout',
        'mcp-protocol-version': '2025-11-25',
      },
    );
    expect(res.status).toBe(200);
    const upstream = backend.seen.slice(before).find((r) => r.method === 'POST')!;
    expect(upstream.headers['mcp-name']).toBe('echo');
    expect(upstream.headers['mcp-method']).toBe('tools/call');
  });

  it('refuses an out-of-scope patch (fail) or ignores it (ignore)', async () => {
    const badPatch = onToolCall({
      allowed: true,
      patch: [{ op: 'replace', path: '/principal/sub', value: 'root' }],
    });
    hookA.answer = badPatch;
    hookB.answer = badPatch;
    const strict = await proxyWith({ mutating: [hook('bad', hookA)] });
    const lenient = await proxyWith({ mutating: [hook('bad-ok', hookB, { failure_policy: 'ignore' })] });
    const c1 = await client(strict);
    const c2 = await client(lenient);
    try {
      expect(await callError(c1, 'echo', { text: 'x' })).toContain(
        'Webhook error: mutating webhook \\"bad\\" failed',
      );
      const init = await post(`${strict.url}/mcp`, INIT_BODY);
      const raw = await post(
        `${strict.url}/mcp`,
        { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } },
        { 'mcp-session-id': init.headers.get('mcp-session-id')! },
      );
      expect(raw.status).toBe(500);
      expect(raw.json).toMatchObject({ id: 7, error: { code: -32603 } });
      expect(firstText(await c2.callTool({ name: 'echo', arguments: { text: 'unchanged' } }))).toBe(
        'unchanged',
      );
    } finally {
      await c1.close();
      await c2.close();
    }
  });

  it('refuses a patch that changes the request id', async () => {
    hookA.answer = onToolCall({
      allowed: true,
      patch: [{ op: 'replace', path: '/mcp_request/id', value: 999 }],
    });
    const proxy = await proxyWith({ mutating: [hook('ids', hookA)] });
    const c = await client(proxy);
    try {
      expect(await callError(c, 'echo', { text: 'x' })).toContain('Webhook error');
    } finally {
      await c.close();
    }
  });
});
