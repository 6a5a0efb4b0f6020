/**
 * One Cedar decision for every method that names a tool, prompt or resource, end to end: real
 * oidc-provider tokens, Moat's proxy, the conformance fixture as a stdio server. And list answers
 * the policy cannot read (gzip, malformed) from a real, deliberately broken HTTP server fail closed.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { moatInFrontOf, type MoatUnderTest } from '../../fixtures/conformance/moat.js';
import { oidcConfigFor, startTestOidcProvider, type TestOidcProvider } from '../../support/oidc.js';
import { INIT_BODY, memoryLogger, messageOfAnswer, post, testConfig } from '../../support/proxy-harness.js';

const AUTHZ = {
  version: '1.0',
  type: 'cedarv1',
  cedar: {
    policies: [
      'permit(principal, action == Action::"call_tool", resource == Tool::"moat_echo");',
      'permit(principal, action == Action::"get_prompt", resource == Prompt::"test_simple_prompt");',
      'permit(principal, action == Action::"read_resource", resource == Resource::"test://static-text");',
      'permit(principal in MoatGroup::"admins", action, resource);',
    ],
  },
};

let idp: TestOidcProvider;
let token: string;
beforeAll(async () => {
  idp = await startTestOidcProvider([{ id: 'carol' }]);
  token = await idp.token('carol');
});
afterAll(async () => {
  await idp?.close();
});

const oidc = () => ({
  oidc_config: oidcConfigFor(idp),
  authz_config: AUTHZ,
});

function headers(sessionId?: string): Record<string, string> {
  return {
    authorization: `Bearer ${token}`,
    'mcp-protocol-version': '2025-11-25',
    ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
  };
}

type Answer = { result?: Record<string, unknown>; error?: { code: number; message: string } };
const parse = (text: string): Answer => messageOfAnswer<Answer>(text);

describe('authorization of every method that names a resource (stdio server)', () => {
  let moat: MoatUnderTest;
  let url: string;
  let session: string;
  let nextId = 10;
  const rpc = async (method: string, params: Record<string, unknown> = {}) => {
    const res = await post(url, { jsonrpc: '2.0', id: nextId++, method, params }, headers(session));
    return { status: res.status, answer: parse(res.text) };
  };

  beforeAll(async () => {
    moat = await moatInFrontOf('stdio', oidc());
    url = `${moat.proxy.url}/mcp`;
    const init = await post(url, INIT_BODY, headers());
    expect(init.status).toBe(200);
    session = init.headers.get('mcp-session-id')!;
  });
  afterAll(async () => {
    await moat?.stop();
  });

  it('decides calls, prompt gets, reads and subscriptions', async () => {
    expect((await rpc('tools/call', { name: 'moat_echo', arguments: { text: 'hi' } })).status).toBe(200);
    expect((await rpc('tools/call', { name: 'test_simple_text' })).status).toBe(403);
    expect((await rpc('prompts/get', { name: 'test_simple_prompt' })).status).toBe(200);
    expect((await rpc('prompts/get', { name: 'test_prompt_with_image' })).status).toBe(403);
    expect((await rpc('resources/read', { uri: 'test://static-text' })).status).toBe(200);
    expect((await rpc('resources/read', { uri: 'test://static-binary' })).status).toBe(403);
    expect((await rpc('resources/subscribe', { uri: 'test://watched' })).status).toBe(403);
  });

  it('decides completion/complete by its ref', async () => {
    const argument = { name: 'arg1', value: 'a' };
    const allowed = await rpc('completion/complete', {
      ref: { type: 'ref/prompt', name: 'test_simple_prompt' },
      argument,
    });
    expect(allowed.status).toBe(200);
    const denied = await rpc('completion/complete', {
      ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
      argument,
    });
    expect(denied.status).toBe(403);
    expect(denied.answer.error?.message).toMatch(/complete arguments of prompt "test_prompt_with_arguments"/);
    const template = await rpc('completion/complete', {
      ref: { type: 'ref/resource', uri: 'test://template/{id}/data' },
      argument: { name: 'id', value: '1' },
    });
    expect(template.status).toBe(403);
  });

  it('filters every list by the same decisions', async () => {
    const names = (answer: Answer, field: string, key: string) =>
      (answer.result?.[field] as Array<Record<string, string>>).map((item) => item[key]);
    expect(names((await rpc('tools/list')).answer, 'tools', 'name')).toEqual(['moat_echo']);
    expect(names((await rpc('prompts/list')).answer, 'prompts', 'name')).toEqual(['test_simple_prompt']);
    expect(names((await rpc('resources/list')).answer, 'resources', 'uri')).toEqual(['test://static-text']);
    expect(names((await rpc('resources/templates/list')).answer, 'resourceTemplates', 'uriTemplate')).toEqual(
      [],
    );
  });
});

describe('a list answer the policy cannot read', () => {
  let server: Server;
  let proxy: RunningProxy;
  let mode: 'gzip' | 'malformed' | 'not-a-list' = 'gzip';
  const tools = {
    tools: [
      { name: 'moat_echo', inputSchema: {} },
      { name: 'hidden', inputSchema: {} },
    ],
  };

  beforeAll(async () => {
    // A real HTTP MCP endpoint that misbehaves on tools/list in the chosen way.
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number; method: string };
        if (message.method !== 'tools/list') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: {} }));
          return;
        }
        const body = JSON.stringify({ jsonrpc: '2.0', id: message.id, result: tools });
        if (mode === 'gzip') {
          res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
          res.end(gzipSync(body));
        } else if (mode === 'malformed') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(body.slice(0, -1) + ',]}');
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { tools: JSON.stringify(tools) } }),
          );
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    proxy = await startProxy(
      testConfig({ ...oidc(), stateless: true }),
      { kind: 'http', url: `http://127.0.0.1:${port}/mcp`, transport: 'streamable-http', remote: false },
      { logger: memoryLogger().logger },
    );
  });
  afterAll(async () => {
    await proxy?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  // A body that is not JSON at all is refused by the relay before any policy (502); a JSON answer
  // whose list the policy cannot read is refused by the policy.
  const refusals = [
    ['gzip', /broken answer: the body is not a JSON object/],
    ['malformed', /broken answer: the body is not a JSON object/],
    ['not-a-list', /could not be read/],
  ] as const;
  for (const [m, why] of refusals) {
    it(`answers an error, never the unfiltered list (${m})`, async () => {
      mode = m;
      const res = await post(`${proxy.url}/mcp`, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, headers());
      expect(res.text).not.toContain('hidden');
      expect(parse(res.text).error?.message).toMatch(why);
    });
  }
});
