import { describe, expect, it } from 'vitest';
import {
  headerText,
  initializeAnswer,
  sessionEraAnswer,
  negotiatedRevision,
  standardHeaders,
  withEnvelope,
} from './wire.js';
import { speaksStatelessRevision } from '../decision.js';

describe('the 2026-07-28 wire for a 2025-era session', () => {
  it('adds the envelope, keeping the client’s own _meta (the proxy’s keys win)', () => {
    const sent = withEnvelope(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'x',
          _meta: { progressToken: 7, 'io.modelcontextprotocol/protocolVersion': '1999-01-01' },
        },
      },
      { clientInfo: { name: 'c', version: '1' }, capabilities: { roots: {} }, logLevel: 'error' },
    );
    expect(sent.params?._meta).toEqual({
      progressToken: 7,
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': { roots: {} },
      'io.modelcontextprotocol/logLevel': 'error',
    });
  });

  it('names the method and target in headers, Base64 where not plain ASCII', () => {
    expect(
      standardHeaders({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'file:///é' } }),
    ).toMatchObject({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'resources/read',
      'mcp-name': `=?base64?${Buffer.from('file:///é').toString('base64')}?=`,
    });
    expect(standardHeaders({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).not.toHaveProperty('mcp-name');
    expect(headerText(' padded')).toMatch(/^=\?base64\?/);
  });

  it('drops resultType and answers initialize from server/discover', () => {
    expect(
      sessionEraAnswer({ jsonrpc: '2.0', id: 1, result: { resultType: 'complete', tools: [] } }),
    ).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { tools: [] },
    });
    const discovered = {
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: {} },
      instructions: 'hi',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 's', version: '2' } },
    };
    expect(speaksStatelessRevision(discovered)).toBe(true);
    expect(speaksStatelessRevision({ supportedVersions: ['2025-11-25'] })).toBe(false);
    expect(initializeAnswer(5, discovered, negotiatedRevision('2025-06-18')).result).toEqual({
      protocolVersion: '2025-06-18',
      capabilities: { tools: {} },
      serverInfo: { name: 's', version: '2' },
      instructions: 'hi',
    });
    expect(negotiatedRevision('2026-07-28')).toBe('2025-11-25');
  });
});
