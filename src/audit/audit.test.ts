import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EdgeMiddleware, EdgeRequest } from '../proxy/types.js';
import { loadAuditSettings, parseAuditConfig, type AuditSettings } from './config.js';
import { eventType, outcomeOf, rpcErrorCodeIn, type AuditEvent } from './event.js';
import { createAuditor } from './middleware.js';
import type { Identity } from '../mcp/identity.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'moat-audit-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const alice: Identity = {
  subject: 'alice',
  name: 'Alice',
  groups: [],
  claims: { sub: 'alice' },
  local: false,
};

/** A real HTTP server whose handler is `middleware` around `inner`. */
async function serve(middleware: EdgeMiddleware, inner: (r: EdgeRequest) => Promise<void> | void) {
  const server: Server = createServer((req, res) => {
    let body: Promise<Buffer> | undefined;
    const request: EdgeRequest = {
      req,
      res,
      identity: alice,
      clientAddress: '10.1.2.3',
      externalBaseUrl: 'http://x',
      annotations: {},
      readBody: () =>
        (body ??= new Promise((resolve) => {
          const chunks: Buffer[] = [];
          req.on('data', (c: Buffer) => chunks.push(c));
          req.on('end', () => resolve(Buffer.concat(chunks)));
        })),
    };
    void middleware(request, async () => inner(request));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const settings = (over: Partial<AuditSettings> = {}): AuditSettings => ({
  component: 'wx',
  excludeEventTypes: new Set(),
  includeRequestData: false,
  includeResponseData: false,
  detectApplicationErrors: true,
  maxDataSize: 1024,
  ...over,
});

describe('audit config', () => {
  it('is off without config or with enabled: false; defaults the component to the workload name', async () => {
    await expect(loadAuditSettings({ name: 'wx' })).resolves.toBeUndefined();
    await expect(
      loadAuditSettings({ name: 'wx', audit_config: { enabled: false } }),
    ).resolves.toBeUndefined();
    await expect(loadAuditSettings({ name: 'wx', audit_config: {} })).resolves.toMatchObject({
      component: 'wx',
      includeRequestData: false,
      detectApplicationErrors: true,
      maxDataSize: 1024,
    });
  });

  it.each([
    ['{"eventTypes": ["mcp_tool_cal"]}', /field eventTypes\[0\]: unknown event type "mcp_tool_cal"/],
    ['{"logfile": "/tmp/x"}', /unknown field logfile/],
    ['{"maxDataSize": -1}', /field maxDataSize/],
    ['{oops', /not valid JSON/],
  ])('rejects %s with a clear message', (text, message) => {
    expect(() => parseAuditConfig(text, 'a.json')).toThrow(message);
  });

  it('names an unreadable --audit-config file', async () => {
    await expect(loadAuditSettings({ name: 'x', audit_config_path: join(dir, 'nope.json') })).rejects.toThrow(
      /--audit-config: cannot read/,
    );
    const file = join(dir, 'a.json');
    await writeFile(file, '{"component": "c", "logFile": "/x"}');
    await expect(loadAuditSettings({ name: 'x', audit_config_path: file })).resolves.toMatchObject({
      component: 'c',
      logFile: '/x',
    });
  });
});

describe('audit classification', () => {
  it('maps MCP methods and HTTP requests to event types', () => {
    expect(eventType('POST', { method: 'tools/call' })).toBe('mcp_tool_call');
    expect(eventType('POST', { method: 'resources/read' })).toBe('mcp_resource_read');
    expect(eventType('POST', { method: 'sampling/whatever' })).toBe('mcp_request');
    expect(eventType('GET', {})).toBe('sse_connection');
    expect(eventType('DELETE', {})).toBe('http_request');
  });

  it('derives the outcome from status, denial and JSON-RPC error', () => {
    expect(outcomeOf(200, {}, true)).toBe('success');
    expect(outcomeOf(200, { rpcErrorCode: -32602 }, true)).toBe('application_error');
    expect(outcomeOf(200, { rpcErrorCode: -32602 }, false)).toBe('success');
    expect(outcomeOf(202, { deniedBy: 'authz' }, true)).toBe('denied');
    expect(outcomeOf(401, {}, true)).toBe('denied');
    expect(outcomeOf(400, {}, true)).toBe('failure');
    expect(outcomeOf(502, {}, true)).toBe('error');
  });
});

describe('JSON-RPC error answers', () => {
  it('finds the error code of the answer to the request, in JSON or in an SSE stream', () => {
    const json = Buffer.from('{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"tool not found"}}');
    expect(rpcErrorCodeIn(json, 'application/json', 3)).toBe(-32602);
    expect(rpcErrorCodeIn(json, 'application/json', 4)).toBeUndefined();
    const sse = Buffer.from(
      'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n' +
        'event: message\ndata: {"jsonrpc":"2.0","id":"a","error":{"code":-32000,"message":"boom"}}\n\n',
    );
    expect(rpcErrorCodeIn(sse, 'text/event-stream', 'a')).toBe(-32000);
    const ok = Buffer.from('{"jsonrpc":"2.0","id":3,"result":{"isError":true}}');
    expect(rpcErrorCodeIn(ok, 'application/json; charset=utf-8', 3)).toBeUndefined();
    expect(rpcErrorCodeIn(Buffer.from('{cut'), 'application/json', 3)).toBeUndefined();
  });
});

describe('audit middleware', () => {
  it('appends one event per request to a 0600 file, with request data cut at maxDataSize', async () => {
    const logFile = join(dir, 'audit.log');
    await writeFile(logFile, '{"earlier":"line"}\n', { mode: 0o600 });
    const auditor = await createAuditor(settings({ logFile, includeRequestData: true, maxDataSize: 20 }), {
      transport: 'streamable-http',
    });
    const server = await serve(auditor.middleware, async (r) => {
      await r.readBody();
      r.annotations.method = 'tools/call';
      r.annotations.target = 'weather';
      r.annotations.id = 7;
      r.res.setHeader('mcp-session-id', 'sess-1');
      r.res
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"jsonrpc":"2.0","id":7,"result":{}}');
    });
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'weather' } });
    const res = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'ua/1',
        authorization: 'Bearer SECRET-TOKEN',
      },
      body,
    });
    await res.text();
    await server.close();
    await auditor.close();
    const lines = (await readFile(logFile, 'utf8')).trim().split('\n');
    expect(lines[0]).toBe('{"earlier":"line"}');
    expect(lines).toHaveLength(2);
    const event = JSON.parse(lines[1] as string) as AuditEvent;
    expect(event).toMatchObject({
      level: 'AUDIT',
      msg: 'audit_event',
      type: 'mcp_tool_call',
      outcome: 'success',
      component: 'wx',
      source: { type: 'network', value: '10.1.2.3', extra: { user_agent: 'ua/1' } },
      subjects: { user_id: 'alice', user: 'Alice' },
      target: { endpoint: '/mcp', method: 'tools/call', name: 'weather', type: 'tool' },
      metadata: {
        extra: {
          transport: 'http',
          http_status: 200,
          session_id: 'sess-1',
          request_id: 7,
          response_size_bytes: 36,
        },
      },
      data: { request: `${body.slice(0, 20)}…[truncated ${body.length - 20} characters]` },
    });
    expect(lines[1]).not.toContain('SECRET-TOKEN');
    expect((await stat(logFile)).mode & 0o777).toBe(0o600);
  });

  it('creates a new log file with mode 0600 and honours event type filters', async () => {
    const logFile = join(dir, 'new.log');
    const auditor = await createAuditor(
      settings({ logFile, excludeEventTypes: new Set(['sse_connection']) }),
      {
        transport: 'sse',
      },
    );
    const server = await serve(auditor.middleware, (r) => {
      r.res.writeHead(r.req.method === 'GET' ? 200 : 404).end();
    });
    await (await fetch(`${server.url}/sse`)).text();
    await (await fetch(`${server.url}/other`, { method: 'DELETE' })).text();
    await server.close();
    await auditor.close();
    const events = (await readFile(logFile, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as AuditEvent);
    expect(events.map((e) => [e.type, e.outcome, e.metadata.extra.transport])).toEqual([
      ['http_request', 'failure', 'sse'],
    ]);
    expect((await stat(logFile)).mode & 0o777).toBe(0o600);
  });

  it('refuses a log file it cannot open, naming it', async () => {
    await expect(
      createAuditor(settings({ logFile: join(dir, 'no', 'such', 'dir', 'a.log') }), { transport: 'sse' }),
    ).rejects.toThrow(/audit config logFile: cannot open .*a\.log for appending/);
  });
});
