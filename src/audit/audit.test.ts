import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordResponse, type ExchangeRecord, type ExchangeSummary } from '../mcp/exchange.js';
import { loadAuditSettings, parseAuditConfig, type AuditSettings } from './config.js';
import { auditId } from './audit-id.js';
import { eventLine, eventType, isoTime, outcomeOf, type AuditEvent } from './event.js';
import { createAuditor } from './observer.js';
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

const summary = (over: Partial<ExchangeSummary> = {}): ExchangeSummary => ({
  httpMethod: 'POST',
  path: '/mcp',
  status: 200,
  started: 1000,
  ended: 1012,
  identity: alice,
  clientAddress: '10.1.2.3',
  userAgent: 'ua/1',
  transport: 'streamable-http',
  responseBytes: 36,
  record: {},
  ...over,
});

describe('auditor', () => {
  it('appends one event per exchange to a 0600 file, with request data cut at maxDataSize', async () => {
    const logFile = join(dir, 'audit.log');
    await writeFile(logFile, '{"earlier":"line"}\n', { mode: 0o600 });
    const auditor = await createAuditor(settings({ logFile, includeRequestData: true, maxDataSize: 20 }));
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'weather' } });
    auditor.onExchange(
      summary({
        requestBody: Buffer.from(body),
        record: { method: 'tools/call', target: 'weather', id: 7, sessionId: 'sess-1' },
      }),
    );
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
          duration_ms: 12,
          transport: 'http',
          http_status: 200,
          session_id: 'sess-1',
          request_id: 7,
          response_size_bytes: 36,
        },
      },
      data: { request: `${body.slice(0, 20)}…[truncated ${body.length - 20} characters]` },
    });
    expect((await stat(logFile)).mode & 0o777).toBe(0o600);
  });

  it('reports an error answer as an application error and logs the answer when asked', async () => {
    const sink = new PassThrough();
    const lines: string[] = [];
    sink.on('data', (d: Buffer) => lines.push(...d.toString('utf8').trim().split('\n')));
    const quiet = await createAuditor(settings({ detectApplicationErrors: false }), { sink });
    expect(quiet.needsResponse).toBeUndefined();
    // Detecting application errors needs only answers that can be errors.
    const detecting = await createAuditor(settings({}), { sink });
    expect(detecting.needsResponse?.('tools/call', '{"jsonrpc":"2.0","id":1,"result":{}}')).toBe(false);
    expect(detecting.needsResponse?.('tools/call', '{"jsonrpc":"2.0","id":1,"error":{"code":1}}')).toBe(true);
    const auditor = await createAuditor(settings({ includeResponseData: true, maxDataSize: 30 }), { sink });
    expect(auditor.needsResponse?.('tools/list', '{"result":{}}')).toBe(true);
    const record: ExchangeRecord = { method: 'tools/call', id: 3 };
    recordResponse(record, { jsonrpc: '2.0', id: 3, error: { code: -32602, message: 'tool not found' } });
    auditor.onExchange(summary({ record }));
    await new Promise((r) => setImmediate(r));
    const event = JSON.parse(lines[0] as string) as AuditEvent;
    const answer = JSON.stringify(record.response);
    expect(event).toMatchObject({
      outcome: 'application_error',
      metadata: { extra: { jsonrpc_error_code: -32602 } },
      data: { response: `${answer.slice(0, 30)}…[truncated ${answer.length - 30} characters]` },
    });
  });

  it('writes every batched line, in order, when closed right after a burst', async () => {
    const logFile = join(dir, 'burst.log');
    const auditor = await createAuditor(settings({ logFile }));
    const count = 2000;
    for (let id = 1; id <= count; id++) {
      auditor.onExchange(summary({ record: { method: 'tools/call', target: 'weather', id } }));
      // Some events land in one turn of the event loop, some in the next.
      if (id % 700 === 0) await new Promise((r) => setImmediate(r));
    }
    await auditor.close();
    const ids = (await readFile(logFile, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as AuditEvent).metadata.extra.request_id);
    expect(ids).toEqual(Array.from({ length: count }, (_, i) => i + 1));
  });

  it("has each turn's lines in the file when the turn ends, before close()", async () => {
    const logFile = join(dir, 'turns.log');
    const auditor = await createAuditor(settings({ logFile }));
    for (const id of [1, 2, 3]) {
      auditor.onExchange(summary({ record: { method: 'tools/call', target: 'weather', id } }));
      await new Promise((r) => setImmediate(r));
      const lines = (await readFile(logFile, 'utf8')).trim().split('\n');
      expect(lines.map((l) => (JSON.parse(l) as AuditEvent).metadata.extra.request_id)).toEqual(
        Array.from({ length: id }, (_, i) => i + 1),
      );
    }
    await auditor.close();
  });

  it('writes the last lines of a process that exits without close()', async () => {
    const logFile = join(dir, 'exit.log');
    const child = join(dir, 'exit-child.mts');
    await writeFile(
      child,
      [
        `import { createAuditor } from ${JSON.stringify(join(import.meta.dirname, 'observer.ts'))};`,
        `const settings = { ...${JSON.stringify(settings({ logFile }))}, excludeEventTypes: new Set() };`,
        'const auditor = await createAuditor(settings as never);',
        `for (let id = 1; id <= 50; id++) auditor.onExchange(${JSON.stringify(summary())} as never);`,
        'process.exit(0);',
      ].join('\n'),
    );
    const result = spawnSync(process.execPath, ['--import', 'tsx', child], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status, result.stderr).toBe(0);
    expect((await readFile(logFile, 'utf8')).trim().split('\n')).toHaveLength(50);
  });

  it('creates a new log file with mode 0600 and honours event type filters', async () => {
    const logFile = join(dir, 'new.log');
    const auditor = await createAuditor(
      settings({ logFile, excludeEventTypes: new Set(['sse_connection']) }),
    );
    auditor.onExchange(summary({ httpMethod: 'GET', path: '/sse', transport: 'sse' }));
    auditor.onExchange(summary({ httpMethod: 'DELETE', path: '/other', status: 404, transport: 'sse' }));
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

  it('writes valid JSON whatever the strings hold (quotes, backslashes, controls, line separators, lone surrogates)', async () => {
    const hostile = 'a"b\\c\n\r\t\u0000\u001f\u2028\u2029\ud800x\udfff}{"],[';
    const sink = new PassThrough();
    let text = '';
    sink.on('data', (d: Buffer) => (text += d.toString('utf8')));
    const auditor = await createAuditor(
      settings({ component: hostile, includeRequestData: true, includeResponseData: true }),
      { sink },
    );
    const record: ExchangeRecord = {
      method: 'tools/call',
      target: hostile,
      id: hostile,
      sessionId: hostile,
      deniedBy: hostile,
      toolDefinitionsChanged: [hostile],
    };
    recordResponse(record, { jsonrpc: '2.0', id: hostile, error: { code: -32000, message: hostile } });
    const identity: Identity = { subject: hostile, email: hostile, groups: [], claims: {}, local: true };
    auditor.onExchange(
      summary({
        path: hostile,
        clientAddress: hostile,
        userAgent: hostile,
        identity,
        requestBody: Buffer.from(hostile),
        record,
      }),
    );
    await auditor.close();
    const lines = text.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe('');
    const event = JSON.parse(lines[0] as string) as AuditEvent;
    // The same fields, in the same order, as the event object JSON.stringify would write.
    expect(Object.keys(event)).toEqual([
      'time',
      'level',
      'msg',
      'audit_id',
      'type',
      'logged_at',
      'outcome',
      'component',
      'source',
      'subjects',
      'target',
      'metadata',
      'data',
    ]);
    expect(event).toEqual({
      time: new Date(1012).toISOString(),
      level: 'AUDIT',
      msg: 'audit_event',
      audit_id: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown,
      type: 'mcp_tool_call',
      logged_at: new Date(1012).toISOString(),
      outcome: 'denied',
      component: hostile,
      source: { type: 'network', value: hostile, extra: { user_agent: hostile } },
      subjects: { user_id: hostile, user: hostile, email: hostile, local: true },
      target: { endpoint: hostile, method: 'tools/call', name: hostile, type: 'tool' },
      metadata: {
        extra: {
          duration_ms: 12,
          transport: 'http',
          http_status: 200,
          response_size_bytes: 36,
          session_id: hostile,
          request_id: hostile,
          denied_by: hostile,
          jsonrpc_error_code: -32000,
          tool_definitions_changed: [hostile],
        },
      },
      // The body arrived as bytes: its lone surrogates were U+FFFD before the proxy read it.
      data: { request: Buffer.from(hostile).toString('utf8'), response: JSON.stringify(record.response) },
    });
    // JSON.stringify escapes a lone surrogate, so the line is valid UTF-8 as well.
    expect(lines[0]).toContain('\\ud800');
  });

  it('gives every event a distinct version 4 UUID, across refills of its random pool', () => {
    const ids = Array.from({ length: 1000 }, () => auditId());
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Every hex digit of the random part turns up (not stuck on a few values).
    expect(new Set(ids.join('').replaceAll('-', '')).size).toBe(16);
  });

  it('writes each time as toISOString does, across seconds, before 1970 and past year 9999', () => {
    const times = [
      0,
      1,
      9,
      10,
      99,
      100,
      999,
      1000,
      1012,
      -1,
      -999,
      -1000,
      -1001,
      Date.UTC(2026, 10, 25, 15, 34, 2, 867),
    ];
    times.push(
      Date.UTC(2026, 10, 25, 15, 34, 2, 868),
      Date.UTC(2026, 10, 25, 15, 34, 3, 5),
      8.64e15,
      253402300800000,
    );
    for (const ms of times) expect(isoTime(ms)).toBe(JSON.stringify(new Date(ms).toISOString()));
  });

  it('writes who and from where afresh when they change, and the same text for a reused identity', () => {
    const facts = { type: 'mcp_tool_call' as const, component: 'wx', detectApplicationErrors: true };
    const lineOf = (over: Partial<ExchangeSummary>) =>
      JSON.parse(eventLine(summary(over), facts)) as AuditEvent;
    const frozen: Identity = Object.freeze({
      subject: 'bob',
      email: 'bob@example.com',
      groups: Object.freeze([]) as unknown as string[],
      claims: Object.freeze({ sub: 'bob', preferred_username: 'bobby' }),
      local: false,
    });
    expect(lineOf({ identity: frozen }).subjects).toEqual({
      user_id: 'bob',
      user: 'bobby',
      email: 'bob@example.com',
    });
    expect(lineOf({ identity: frozen }).subjects).toEqual({
      user_id: 'bob',
      user: 'bobby',
      email: 'bob@example.com',
    });
    // An identity that can change (not one authentication built) is read on every event.
    const mutable: Identity = { subject: 'carol', groups: [], claims: {}, local: false };
    expect(lineOf({ identity: mutable }).subjects).toEqual({ user_id: 'carol', user: 'carol' });
    mutable.name = 'Carol';
    expect(lineOf({ identity: mutable }).subjects).toEqual({ user_id: 'carol', user: 'Carol' });
    expect(lineOf({ clientAddress: '10.0.0.1', userAgent: 'a/1' }).source).toEqual({
      type: 'network',
      value: '10.0.0.1',
      extra: { user_agent: 'a/1' },
    });
    expect(lineOf({ clientAddress: '10.0.0.1', userAgent: undefined }).source).toEqual({
      type: 'network',
      value: '10.0.0.1',
    });
    expect(lineOf({ clientAddress: '10.0.0.2', userAgent: undefined }).source).toEqual({
      type: 'network',
      value: '10.0.0.2',
    });
    expect(lineOf({ clientAddress: '10.0.0.2', userAgent: 'b/2' }).source).toEqual({
      type: 'network',
      value: '10.0.0.2',
      extra: { user_agent: 'b/2' },
    });
  });

  it('refuses a log file it cannot open, naming it', async () => {
    await expect(
      createAuditor(settings({ logFile: join(dir, 'no', 'such', 'dir', 'a.log') })),
    ).rejects.toThrow(/audit config logFile: cannot open .*a\.log for appending/);
  });

  it('names the member behind an aggregate endpoint as target.backend, only when known', () => {
    const facts = { type: 'mcp_tool_call' as const, component: 'group', detectApplicationErrors: false };
    const record = { method: 'tools/call', target: 'now', backend: 'time' };
    const event = JSON.parse(eventLine(summary({ record }), facts)) as AuditEvent;
    expect(event.target).toEqual({
      endpoint: '/mcp',
      method: 'tools/call',
      name: 'now',
      backend: 'time',
      type: 'tool',
    });
    const single = JSON.parse(
      eventLine(summary({ record: { method: 'tools/call', target: 'now' } }), facts),
    ) as AuditEvent;
    expect(single.target.backend).toBeUndefined();
  });
});
