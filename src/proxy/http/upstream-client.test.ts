import { describe, expect, it } from 'vitest';
import { inferListRequest } from './relay.js';
import { clientHeaders, upstreamHeaders, upstreamUrl } from './upstream-client.js';

const container = {
  kind: 'http' as const,
  url: 'http://127.0.0.1:8080/mcp',
  transport: 'streamable-http' as const,
  remote: false,
};

describe('upstream requests', () => {
  it('keeps the path for containers and uses the remote URL for remote backends', () => {
    expect(upstreamUrl(container, '/mcp?x=1')).toBe('http://127.0.0.1:8080/mcp?x=1');
    const remote = { ...container, url: 'https://api.example/v1/mcp?key=k', remote: true };
    expect(upstreamUrl(remote, '/anything?y=2')).toBe('https://api.example/v1/mcp?key=k&y=2');
    expect(upstreamUrl(remote, '/')).toBe('https://api.example/v1/mcp?key=k');
  });

  it('never lets the request target pick another host', () => {
    expect(upstreamUrl(container, '//evil.example/mcp?x=1')).toBe('http://127.0.0.1:8080/mcp?x=1');
    expect(upstreamUrl(container, 'http://evil.example/mcp')).toBe('http://127.0.0.1:8080/mcp');
  });

  it('never forwards the client credentials, cookies, hop-by-hop or session headers', () => {
    const out = upstreamHeaders(
      {
        authorization: 'Bearer t',
        cookie: 'c=1',
        connection: 'keep-alive',
        'mcp-session-id': 'client-id',
        'x-forwarded-for': 'spoofed',
        'mcp-protocol-version': '2025-11-25',
        accept: 'text/event-stream',
        'last-event-id': '5',
      },
      { remote: true, clientAddress: '127.0.0.1', externalBaseUrl: 'http://p:1' },
    );
    expect(out).toEqual({
      'mcp-protocol-version': '2025-11-25',
      accept: 'text/event-stream',
      'last-event-id': '5',
      'accept-encoding': 'identity',
    });
    const local = upstreamHeaders(
      {},
      { remote: false, clientAddress: '10.0.0.9', externalBaseUrl: 'https://gw:8443/x' },
    );
    expect(local).toMatchObject({
      'x-forwarded-for': '10.0.0.9',
      'x-forwarded-host': 'gw:8443',
      'x-forwarded-proto': 'https',
    });
    expect(
      clientHeaders(
        { 'mcp-session-id': 'b', 'www-authenticate': 'Bearer', 'content-length': '5', 'content-type': 'x' },
        true,
      ),
    ).toEqual({ 'content-type': 'x' });
  });
});

describe('inferListRequest', () => {
  it('recognises list results by shape and nothing else', () => {
    const response = (result: unknown) => ({ jsonrpc: '2.0' as const, id: 3, result });
    expect(inferListRequest(response({ tools: [] }))).toEqual({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/list',
    });
    expect(inferListRequest(response({ resourceTemplates: [] }))?.method).toBe('resources/templates/list');
    expect(inferListRequest(response({ content: [] }))).toBeUndefined();
    expect(inferListRequest(response({ tools: 'x' }))).toBeUndefined();
    expect(inferListRequest({ jsonrpc: '2.0', id: 3, error: { code: 1, message: 'x' } })).toBeUndefined();
  });
});
