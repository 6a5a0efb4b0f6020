/**
 * The member behind an aggregate endpoint (issue 32), end to end through the real proxy: a real
 * MCP SDK server stands in for the aggregator, a plain function maps its tool names to member
 * workloads as the aggregator's resolver does (`memberOf` on the http BackendSpec), a real SDK
 * client calls. Cedar decides on `context.backend` (calls and the tools/list answer), the audit
 * log names the member (`target.backend`), and a real OpenTelemetry Collector receives spans
 * carrying it (`moat.backend`).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { AuditEvent } from '../../../src/audit/event.js';
import type { MemberKind } from '../../../src/mcp/members.js';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { startV2StreamableBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';
import { startCollector, type CollectedSpan, type Collector } from '../../support/otel-collector.js';
import { memoryLogger, testConfig } from '../../support/proxy-harness.js';

/** The aggregator's answer, as a plain map: `echo` and `add` are member `time`'s, the rest `web`'s. */
const MEMBERS: Record<string, string> = {
  echo: 'time',
  add: 'time',
  secret: 'web',
  progress: 'web',
  confirm: 'web',
  later: 'web',
};
const asked: string[] = [];
const memberOf = (kind: MemberKind, name: string): string | undefined => {
  asked.push(`${kind}:${name}`);
  return Object.hasOwn(MEMBERS, name) ? MEMBERS[name] : undefined;
};

const AUTHZ = {
  version: '1.0',
  type: 'cedarv1',
  cedar: {
    policies: [
      'permit(principal, action, resource) when { context.backend == "time" };',
      'forbid(principal, action, resource) when { context has backend && context.backend == "web" };',
    ],
  },
};

let dir: string;
let backend: HttpBackendServer;
let collector: Collector;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'moat-aggregate-member-'));
  backend = await startV2StreamableBackend();
  collector = await startCollector();
}, 30_000);

afterAll(async () => {
  await backend?.close();
  await collector?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function connect(proxy: RunningProxy): Promise<Client> {
  const client = new Client({ name: 'aggregate-member-test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(proxy.endpoint)));
  return client;
}

async function auditEvents(file: string): Promise<AuditEvent[]> {
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditEvent);
}

const refusal = (call: Promise<unknown>): Promise<string> =>
  call.then(
    (result) => `allowed: ${JSON.stringify(result)}`,
    (err: unknown) => (err as Error).message,
  );

describe('Cedar, audit and spans know the member behind an aggregate endpoint', () => {
  let events: AuditEvent[];
  let spans: CollectedSpan[];
  let listed: string[];
  let echoed: unknown;
  let deniedWeb: string;
  let deniedUnknown: string;

  beforeAll(async () => {
    const auditFile = join(dir, 'authz-audit.log');
    const service = `aggregate-${Math.random().toString(36).slice(2, 8)}`;
    const proxy = await startProxy(
      testConfig({
        name: service,
        authz_config: AUTHZ,
        audit_config: { component: 'group', logFile: auditFile },
        telemetry_config: { endpoint: collector.endpoint, samplingRate: '1' },
      }),
      { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false, memberOf },
      { logger: memoryLogger().logger },
    );
    try {
      const client = await connect(proxy);
      try {
        listed = (await client.listTools()).tools.map((t) => t.name).sort();
        echoed = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
        deniedWeb = await refusal(client.callTool({ name: 'secret', arguments: {} }));
        deniedUnknown = await refusal(client.callTool({ name: 'nowhere', arguments: {} }));
      } finally {
        await client.close();
      }
    } finally {
      await proxy.close(); // writes the pending audit lines, flushes the spans
    }
    events = await auditEvents(auditFile);
    spans = await collector.waitFor('the three tools/call spans', (c) => {
      const calls = c
        .spans()
        .filter((s) => s.service === `moat-${service}` && s.name.startsWith('tools/call'));
      return calls.length >= 3 ? calls : undefined;
    });
  }, 60_000);

  it('lists only the tools of the member Cedar permits', () => {
    expect(listed).toEqual(['add', 'echo']);
  });

  it('permits a call to the permitted member and refuses one to the forbidden member or an unknown one', () => {
    expect(echoed).toMatchObject({ content: [{ type: 'text', text: 'hi' }] });
    expect(deniedWeb).toContain('Access denied: the authorization policy does not permit');
    expect(deniedWeb).toMatch(/call tool \\?"secret/);
    expect(deniedUnknown).toMatch(/Access denied: .* call tool \\?"nowhere/);
    // Each call resolved by kind and name; the list resolved every listed tool.
    expect(asked).toEqual(
      expect.arrayContaining(['tool:echo', 'tool:secret', 'tool:nowhere', 'tool:progress']),
    );
  });

  it('names the member in the audit line, refused calls included', () => {
    const call = (name: string) => events.find((e) => e.type === 'mcp_tool_call' && e.target.name === name);
    expect(call('echo')).toMatchObject({
      outcome: 'success',
      target: { method: 'tools/call', name: 'echo', backend: 'time', type: 'tool' },
    });
    expect(call('secret')).toMatchObject({
      outcome: 'denied',
      target: { name: 'secret', backend: 'web' },
      metadata: { extra: { denied_by: 'authz', http_status: 403 } },
    });
    expect(call('nowhere')?.outcome).toBe('denied');
    expect(call('nowhere')?.target.backend).toBeUndefined();
    // Nothing names a member in an exchange that names no tool, prompt or resource.
    expect(events.find((e) => e.type === 'mcp_tools_list')?.target.backend).toBeUndefined();
  });

  it('carries the member on the spans as moat.backend', () => {
    const span = (name: string) => spans.find((s) => s.name === `tools/call ${name}`);
    expect(span('echo')?.attributes['moat.backend']).toBe('time');
    expect(span('secret')?.attributes['moat.backend']).toBe('web');
    expect(span('secret')?.attributes['moat.policy.denied_by']).toBe('authz');
    expect(span('nowhere')?.attributes['moat.backend']).toBeUndefined();
  });
});

describe('without authorization', () => {
  it('still names the member in the audit line (resolved when the exchange ends)', async () => {
    const auditFile = join(dir, 'audit-only.log');
    const proxy = await startProxy(
      testConfig({ audit_config: { logFile: auditFile } }),
      { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false, memberOf },
      { logger: memoryLogger().logger },
    );
    try {
      const client = await connect(proxy);
      try {
        await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } });
        await client.callTool({ name: 'secret', arguments: {} });
      } finally {
        await client.close();
      }
    } finally {
      await proxy.close();
    }
    const events = await auditEvents(auditFile);
    const backendOf = (name: string) =>
      events.find((e) => e.type === 'mcp_tool_call' && e.target.name === name)?.target.backend;
    expect(backendOf('add')).toBe('time');
    expect(backendOf('secret')).toBe('web');
  }, 30_000);
});
