import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { externalBaseUrl } from './external-url.js';
import { isLoopbackHost } from '../../util/net.js';
import { canonicalOrigin, originAllowed, originAllowlist } from './origin.js';
import { checkMirroredHeaders, checkProtocolVersion, decodeHeaderValue } from './protocol.js';
import { eraOfHeaders, isStatelessRequest } from '../eras/decision.js';
import { ProxyRejection } from '../pipeline/errors.js';
import type { JsonRpcMessage } from '../../mcp/jsonrpc.js';

const req = (headers: Record<string, string>, method = 'POST') =>
  ({ headers, method }) as unknown as IncomingMessage;

describe('origin allowlist', () => {
  it('recognises loopback hosts', () => {
    for (const h of ['localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]'])
      expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['0.0.0.0', '10.0.0.1', 'example.com', '::', '::ffff:10.0.0.1']) {
      expect(isLoopbackHost(h)).toBe(false);
    }
  });

  it('derives loopback origins for a loopback bind, none for others without a list', () => {
    expect([...(originAllowlist(undefined, '127.0.0.1', 8080) ?? [])]).toEqual([
      'http://localhost:8080',
      'http://127.0.0.1:8080',
      'http://[::1]:8080',
    ]);
    expect(originAllowlist(undefined, '0.0.0.0', 8080)).toBeUndefined();
    expect([...(originAllowlist(['HTTPS://App.Example:443'], '0.0.0.0', 1) ?? [])]).toEqual([
      'https://app.example',
    ]);
  });

  it('matches exactly after canonicalisation; no Origin passes; "null" and junk fail', () => {
    const list = originAllowlist(['https://app.example'], '127.0.0.1', 1);
    expect(originAllowed(list, undefined)).toBe(true);
    expect(originAllowed(list, 'https://APP.example')).toBe(true);
    expect(originAllowed(list, 'https://app.example:444')).toBe(false);
    expect(originAllowed(list, 'http://app.example')).toBe(false);
    expect(originAllowed(list, 'null')).toBe(false);
    expect(originAllowed(list, 'https://app.example, https://evil')).toBe(false);
    expect(canonicalOrigin('not a url')).toBeUndefined();
  });
});

describe('external base URL', () => {
  const forwarded = {
    host: '127.0.0.1:9000',
    'x-forwarded-proto': 'https',
    'x-forwarded-host': 'gw.example',
    'x-forwarded-port': '8443',
    'x-forwarded-prefix': '/team/',
  };
  it('uses the Host header unless forwarded headers are trusted', () => {
    expect(externalBaseUrl(req(forwarded), false, 'fallback:1')).toBe('http://127.0.0.1:9000');
    expect(externalBaseUrl(req(forwarded), true, 'fallback:1')).toBe('https://gw.example:8443/team');
  });
  it('answers each Host with its own base URL when hosts and proxies alternate', () => {
    // The last answer is remembered: a different Host or proxy address must not get it.
    expect(externalBaseUrl(req({ host: 'a:1' }), false, 'p:1')).toBe('http://a:1');
    expect(externalBaseUrl(req({ host: 'b:2' }), false, 'p:1')).toBe('http://b:2');
    expect(externalBaseUrl(req({ host: 'b:2' }), false, 'p:1')).toBe('http://b:2');
    expect(externalBaseUrl(req({ host: 'bad host' }), false, 'p:1')).toBe('http://p:1');
    expect(externalBaseUrl(req({ host: 'bad host' }), false, 'q:2')).toBe('http://q:2');
    expect(externalBaseUrl(req({ host: 'a:1' }), false, 'q:2')).toBe('http://a:1');
  });
  it('falls back to the bind address for a missing or malformed Host', () => {
    expect(externalBaseUrl(req({}), false, '127.0.0.1:5')).toBe('http://127.0.0.1:5');
    expect(externalBaseUrl(req({ host: 'evil/path?x' }), false, '127.0.0.1:5')).toBe('http://127.0.0.1:5');
    expect(externalBaseUrl(req({ host: 'h:1', 'x-forwarded-proto': 'gopher' }), true, 'f')).toBe(
      'http://h:1',
    );
  });
});

describe('protocol rules', () => {
  function rejected(fn: () => void): ProxyRejection {
    try {
      fn();
    } catch (err) {
      if (err instanceof ProxyRejection) return err;
    }
    throw new Error('not rejected');
  }

  it('knows the stateless revision and later dates', () => {
    expect(isStatelessRequest(req({ 'mcp-protocol-version': '2026-07-28' }))).toBe(true);
    expect(isStatelessRequest(req({ 'mcp-protocol-version': '2027-01-01' }))).toBe(true);
    expect(isStatelessRequest(req({ 'mcp-protocol-version': '2025-11-25' }))).toBe(false);
    expect(isStatelessRequest(req({}))).toBe(false);
    expect(eraOfHeaders(req({ 'mcp-protocol-version': '2025-06-18' }))).toBe('session');
    expect(eraOfHeaders(req({ 'mcp-protocol-version': 'v9' }))).toBe('unknown');
  });

  it('strict validation refuses unknown versions only', () => {
    expect(() => checkProtocolVersion(req({}))).not.toThrow();
    expect(() => checkProtocolVersion(req({ 'mcp-protocol-version': '2024-11-05' }))).not.toThrow();
    const err = rejected(() => checkProtocolVersion(req({ 'mcp-protocol-version': 'v9' })));
    expect(err.httpStatus).toBe(400);
    expect(err.rpcError).toMatchObject({ code: -32022, data: { requested: 'v9' } });
  });

  it('checks Mcp-Method and Mcp-Name against the body', () => {
    const callMsg = {
      jsonrpc: '2.0',
      id: 1,
      method: 'resources/read',
      params: { uri: 'file:///ü' },
    } as JsonRpcMessage;
    const sentinel = `=?base64?${Buffer.from('file:///ü').toString('base64')}?=`;
    expect(decodeHeaderValue(sentinel)).toBe('file:///ü');
    expect(() =>
      checkMirroredHeaders(req({ 'mcp-method': 'resources/read', 'mcp-name': sentinel }), callMsg),
    ).not.toThrow();
    expect(
      rejected(() => checkMirroredHeaders(req({ 'mcp-method': 'resources/read' }), callMsg)).rpcError.code,
    ).toBe(-32020);
    expect(rejected(() => checkMirroredHeaders(req({ 'mcp-name': sentinel }), callMsg)).id).toBe(1);
    const note = { jsonrpc: '2.0', method: 'notifications/cancelled' } as JsonRpcMessage;
    expect(() => checkMirroredHeaders(req({}), note)).not.toThrow();
    expect(() => checkMirroredHeaders(req({ 'mcp-method': 'other' }), note)).toThrow(ProxyRejection);
    const response = { jsonrpc: '2.0', id: 1, result: {} } as JsonRpcMessage;
    expect(() => checkMirroredHeaders(req({}), response)).not.toThrow();
  });
});
