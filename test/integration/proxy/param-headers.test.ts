/**
 * MCP 2026-07-28 custom headers (`x-mcp-header` / `Mcp-Param-*`) and caching hints through the
 * proxy, in front of a real v2 SDK server that checks neither itself (its low-level `Server`):
 * the official conformance scenario for custom-header validation fails against the server
 * directly and passes through Moat; caching hints pass unchanged, and narrow to `private` when
 * authorization can shape answers per principal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import type { RunConfigInput } from '../../../src/config/runconfig.js';
import { startUncheckedParamHeaderBackend, type ModernBackend } from '../../support/modern-backends.js';
import { memoryLogger, testConfig } from '../../support/proxy-harness.js';
import { runConformance } from '../conformance/suite.js';

const MODERN = '2026-07-28';
const SCENARIO = 'http-custom-header-server-validation';
const TIMEOUT = 120_000;

let backend: ModernBackend;
beforeAll(async () => {
  backend = await startUncheckedParamHeaderBackend();
});
afterAll(async () => {
  await backend?.close();
});

async function moat(config: Partial<RunConfigInput> = {}): Promise<RunningProxy> {
  return startProxy(
    testConfig(config),
    { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
    { logger: memoryLogger().logger },
  );
}

const envelope = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
};

async function send(
  url: string,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  body: { result?: Record<string, unknown>; error?: { code: number; data?: unknown } };
}> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope } }),
  });
  const text = await response.text();
  const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
  return { status: response.status, body: JSON.parse(json) as never };
}

describe('Mcp-Param-* custom headers through the proxy', () => {
  it(
    `passes the conformance scenario ${SCENARIO} only through Moat`,
    async () => {
      const direct = await runConformance(backend.url, { scenario: SCENARIO, requirements: '2026-07-28' });
      expect(direct.get(SCENARIO)?.passed).toBe(false);
      const proxy = await moat();
      try {
        const through = (
          await runConformance(`${proxy.url}/mcp`, { scenario: SCENARIO, requirements: '2026-07-28' })
        ).get(SCENARIO);
        const failed = through?.checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
        expect(failed).toEqual([]);
        expect(through?.checks.length).toBeGreaterThanOrEqual(8);
      } finally {
        await proxy.close();
      }
    },
    TIMEOUT,
  );

  it('refuses a call whose header disagrees with its arguments before the server sees it', async () => {
    const proxy = await moat({ tools_override: { route: { name: 'route_by_region' } } });
    try {
      const url = `${proxy.url}/mcp`;
      const listed = await send(url, 'tools/list', {});
      expect((listed.body.result?.tools as Array<{ name: string }>).map((t) => t.name)).toEqual([
        'route_by_region',
      ]);
      const call = (args: Record<string, unknown>, headers: Record<string, string>) =>
        send(
          url,
          'tools/call',
          { name: 'route_by_region', arguments: args },
          { 'mcp-name': 'route_by_region', ...headers },
        );
      const callsBefore = backend.bodies.filter((b) => b.method === 'tools/call').length;

      const wrong = await call(
        { region: 'eu', priority: 3 },
        { 'mcp-param-region': 'us', 'mcp-param-priority': '3' },
      );
      expect(wrong.status).toBe(400);
      expect(wrong.body.error?.code).toBe(-32020);
      expect(wrong.body.error?.data).toEqual({
        mismatch: {
          header: 'Mcp-Param-Region',
          body: 'the Mcp-Param-Region header decodes to "us" but the body carries region="eu"',
        },
      });
      const missing = await call({ region: 'eu', priority: 3 }, { 'mcp-param-region': 'eu' });
      expect(missing.status).toBe(400);
      expect(missing.body.error?.code).toBe(-32020);
      expect(backend.bodies.filter((b) => b.method === 'tools/call').length).toBe(callsBefore);

      // Numbers compare as numbers; a non-ASCII value comes Base64-encoded.
      const encoded = `=?base64?${Buffer.from('été', 'utf8').toString('base64')}?=`;
      const right = await call(
        { region: 'été', priority: 3 },
        { 'mcp-param-region': encoded, 'mcp-param-priority': '3.0' },
      );
      expect(right.status).toBe(200);
      expect(right.body.result?.content).toEqual([{ type: 'text', text: '{"region":"été","priority":3}' }]);
      // A null argument needs no header.
      const nulled = await call({ region: 'eu', priority: null }, { 'mcp-param-region': 'eu' });
      expect(nulled.status).toBe(200);
    } finally {
      await proxy.close();
    }
  });

  it('checks nothing for 2025-11-25 requests', async () => {
    const proxy = await moat();
    try {
      const url = `${proxy.url}/mcp`;
      await send(url, 'tools/list', {});
      // The backend refuses 2025 traffic itself; the proxy passes it rather than answering -32020.
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'route', arguments: { region: 'eu' } },
        }),
      });
      const body = (await response.json()) as { error?: { code: number } };
      expect(body.error?.code).not.toBe(-32020);
    } finally {
      await proxy.close();
    }
  });
});

describe('caching hints through the proxy', () => {
  it('passes ttlMs and cacheScope unchanged', async () => {
    const proxy = await moat();
    try {
      const { body } = await send(`${proxy.url}/mcp`, 'tools/list', {});
      expect(body.result).toMatchObject({ ttlMs: 60_000, cacheScope: 'public' });
    } finally {
      await proxy.close();
    }
  });

  it('narrows cacheScope to private, keeping ttlMs, when authorization filters answers per principal', async () => {
    const proxy = await moat({
      authz_config: {
        version: '1.0',
        type: 'cedarv1',
        cedar: { policies: ['permit(principal, action, resource);'] },
      },
    });
    try {
      const { body } = await send(`${proxy.url}/mcp`, 'tools/list', {});
      expect(body.result).toMatchObject({ ttlMs: 60_000, cacheScope: 'private' });
      expect((body.result?.tools as unknown[]).length).toBe(1);
    } finally {
      await proxy.close();
    }
  });
});
