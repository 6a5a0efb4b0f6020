import { describe, expect, it } from 'vitest';
import type { ExchangeSummary } from '../mcp/exchange.js';
import {
  errorType,
  exchangeFacts,
  metricAttributes,
  outcomeResponses,
  protocolVersion,
  spanAttributes,
  spanName,
} from './attributes.js';

const summary = (record: ExchangeSummary['record'], status = 200): ExchangeSummary => ({
  httpMethod: 'POST',
  path: '/mcp',
  status,
  started: 1000,
  ended: 1250,
  identity: { subject: 'local', groups: [], claims: {}, local: true },
  clientAddress: '127.0.0.1',
  transport: 'streamable-http',
  responseBytes: 42,
  requestBody: Buffer.from('{}'),
  record,
});

describe('span names', () => {
  it('names tools and prompts, never resource URIs', () => {
    expect(spanName('tools/call', 'echo')).toBe('tools/call echo');
    expect(spanName('prompts/get', 'greet')).toBe('prompts/get greet');
    expect(spanName('resources/read', 'file:///x')).toBe('resources/read');
    expect(spanName('initialize', undefined)).toBe('initialize');
  });
});

describe('error.type', () => {
  it('is the JSON-RPC code, tool_error for isError, the HTTP status of a refusal, or absent', () => {
    expect(errorType(summary({ method: 'tools/call', rpcErrorCode: -32602 }))).toBe('-32602');
    expect(
      errorType(
        summary({ method: 'tools/call', response: { jsonrpc: '2.0', id: 1, result: { isError: true } } }),
      ),
    ).toBe('tool_error');
    expect(errorType(summary({ method: 'tools/call', deniedBy: 'authz' }, 403))).toBe('403');
    expect(
      errorType(summary({ method: 'tools/call', response: { jsonrpc: '2.0', id: 1, result: {} } })),
    ).toBe(undefined);
  });
});

describe('attributes', () => {
  const s = exchangeFacts(summary({ method: 'tools/call', target: 'echo', id: 7, sessionId: 'sess-1' }));

  it('follow the MCP conventions, with the legacy names only when asked', () => {
    const a = spanAttributes(s, false);
    expect(a).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'echo',
      'gen_ai.operation.name': 'execute_tool',
      'jsonrpc.request.id': '7',
      'mcp.session.id': 'sess-1',
      'http.response.status_code': 200,
    });
    expect(a['mcp.tool.name']).toBeUndefined();
    expect(spanAttributes(s, true)).toMatchObject({
      'mcp.method': 'tools/call',
      'mcp.tool.name': 'echo',
      'mcp.request.id': '7',
      'http.status_code': 200,
      'http.duration_ms': 250,
    });
  });

  it('keep metric attributes low in cardinality (no session, no id, no resource URI)', () => {
    expect(metricAttributes({ ...s, error: 'tool_error' })).toEqual({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'echo',
      'error.type': 'tool_error',
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
    });
    expect(
      metricAttributes(exchangeFacts(summary({ method: 'resources/read', target: 'file:///a' }))),
    ).not.toHaveProperty('mcp.resource.uri');
  });

  it('carry the member behind an aggregate endpoint as moat.backend, not on metrics', () => {
    const f = exchangeFacts(summary({ method: 'tools/call', target: 'now', backend: 'time' }));
    expect(spanAttributes(f, false)['moat.backend']).toBe('time');
    expect(spanAttributes(s, false)['moat.backend']).toBeUndefined();
    expect(metricAttributes(f)['moat.backend']).toBeUndefined();
  });
});

describe('which answers telemetry parses', () => {
  it('only those that may be errors, and tool results that may say isError', () => {
    const ok = '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}';
    expect(outcomeResponses('tools/call', ok)).toBe(false);
    expect(outcomeResponses('tools/list', Buffer.from(ok))).toBe(false);
    expect(outcomeResponses('ping', '{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}')).toBe(true);
    const toolError = '{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}';
    expect(outcomeResponses('tools/call', Buffer.from(toolError))).toBe(true);
    // isError means nothing outside a tool result.
    expect(outcomeResponses('prompts/get', toolError)).toBe(false);
  });
});

describe('mcp.protocol.version', () => {
  it("is the client's header, or for initialize the agreed version, else the one asked for", () => {
    const call = exchangeFacts({
      ...summary({ method: 'tools/call' }),
      protocolVersion: '2025-11-25',
      httpVersion: '1.1',
    });
    expect(spanAttributes(call, false)).toMatchObject({
      'mcp.protocol.version': '2025-11-25',
      'network.protocol.version': '1.1',
    });
    expect(metricAttributes(call)['mcp.protocol.version']).toBe('2025-11-25');
    const asked = summary({ method: 'initialize', requestedProtocolVersion: '2026-07-28' });
    expect(protocolVersion(asked)).toBe('2026-07-28');
    const agreed = summary({
      method: 'initialize',
      requestedProtocolVersion: '2026-07-28',
      response: { jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-11-25' } },
    });
    expect(protocolVersion(agreed)).toBe('2025-11-25');
    expect(protocolVersion(summary({ method: 'ping' }))).toBeUndefined();
  });
});
