/**
 * Inbound security end to end through the real proxy: a real OpenID provider (oidc-provider),
 * real MCP SDK servers as backends, real SDK clients, the Cedar engine, and audit lines read back
 * from the audit log file.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { AuditEvent } from '../../../src/audit/event.js';
import type { RunConfigInput } from '../../../src/config/runconfig.js';
import { buildChain } from '../../../src/proxy/chain.js';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { EnvironmentSecretsProvider } from '../../../src/secrets/environment.js';
import {
  startV1SseBackend,
  startV2StreamableBackend,
  type HttpBackendServer,
} from '../../support/mcp-http-backends.js';
import { stdioFixture } from '../../fixtures/conformance/spawn.js';
import { oidcConfigFor, startTestOidcProvider, type TestOidcProvider } from '../../support/oidc.js';
import { INIT_BODY, memoryLogger, post, testConfig } from '../../support/proxy-harness.js';

const AUTHZ = {
  version: '1.0',
  type: 'cedarv1',
  cedar: {
    policies: [
      'permit(principal, action == Action::"call_tool", resource == Tool::"echo");',
      'permit(principal in MoatGroup::"staff", action, resource);',
      'forbid(principal, action, resource == Tool::"secret") unless { principal in MoatGroup::"admins" };',
    ],
    entities_json: JSON.stringify([
      { uid: { type: 'MoatGroup', id: 'admins' }, attrs: {}, parents: [{ type: 'MoatGroup', id: 'staff' }] },
    ]),
  },
};

interface Stack {
  backend: HttpBackendServer;
  proxy: RunningProxy;
  auditFile: string;
}

let idp: TestOidcProvider;
let dir: string;

beforeAll(async () => {
  idp = await startTestOidcProvider([
    { id: 'alice', name: 'Alice', email: 'alice@example.com', groups: ['eng'] },
    { id: 'root', name: 'Root', groups: ['admins'] },
  ]);
  dir = await mkdtemp(join(tmpdir(), 'moat-security-'));
});

afterAll(async () => {
  await idp.close();
  await rm(dir, { recursive: true, force: true });
});

async function startStack(
  transport: 'streamable-http' | 'sse',
  overrides: Partial<RunConfigInput> = {},
): Promise<Stack> {
  const backend = transport === 'sse' ? await startV1SseBackend() : await startV2StreamableBackend();
  const auditFile = join(dir, `audit-${Math.random().toString(36).slice(2)}.log`);
  const config = testConfig({
    transport,
    oidc_config: oidcConfigFor(idp),
    authz_config: AUTHZ,
    audit_config: { component: 'wx', logFile: auditFile },
    ...overrides,
  });
  const proxy = await startProxy(
    config,
    { kind: 'http', url: backend.url, transport, remote: false },
    { logger: memoryLogger().logger },
  );
  return { backend, proxy, auditFile };
}

async function stopStack(s: Stack | undefined): Promise<void> {
  await s?.proxy.close();
  await s?.backend.close();
}

async function auditEvents(s: Stack): Promise<AuditEvent[]> {
  const text = await readFile(s.auditFile, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEvent);
}

async function connect(proxyUrl: string, token: string): Promise<Client> {
  const client = new Client({ name: 'security-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${proxyUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

const firstText = (result: unknown): string =>
  ((result as { content: Array<{ text: string }> }).content[0] as { text: string }).text;

describe('OIDC + Cedar + audit over streamable HTTP', () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack('streamable-http');
  });
  afterAll(() => stopStack(s));

  it('answers a request without a token with 401 and a challenge pointing at the metadata', async () => {
    const res = await post(`${s.proxy.url}/mcp`, INIT_BODY);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${s.proxy.url}/.well-known/oauth-protected-resource/mcp", scope="openid"`,
    );
    expect(res.json).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { message: 'Unauthorized: a bearer token is required' },
    });
    expect(s.backend.seen).toHaveLength(0);
  });

  it('serves RFC 9728 metadata for its own URL at the path-inserted and root well-known URLs', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
    ]) {
      const res = await fetch(`${s.proxy.url}${path}`, { headers: { origin: 'http://app.example' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe('http://app.example');
      expect(await res.json()).toEqual({
        resource: `${s.proxy.url}/mcp`,
        authorization_servers: [idp.issuer],
        bearer_methods_supported: ['header'],
        scopes_supported: ['openid'],
      });
    }
    const preflight = await fetch(`${s.proxy.url}/.well-known/oauth-protected-resource/mcp`, {
      method: 'OPTIONS',
    });
    expect(preflight.status).toBe(204);
  });

  it.each([
    ['Basic credentials', 'Basic YWxpY2U6cHc=', 'invalid_request', 'only Bearer tokens are accepted'],
    ['an empty bearer', 'Bearer', 'invalid_request', 'the Authorization header must be "Bearer <token>"'],
    ['two tokens', 'Bearer a b', 'invalid_request', 'the Authorization header must be "Bearer <token>"'],
    ['a non-JWT', 'Bearer not-a-jwt', 'invalid_token', 'the token is not a JWT'],
    [
      'a JWT with a forged signature',
      'Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln',
      'invalid_token',
      'the token signature is invalid',
    ],
    [
      'a bad character',
      'Bearer abc"def',
      'invalid_request',
      'the bearer token contains characters RFC 6750 does not allow',
    ],
    ['a 9 KiB token', `Bearer ${'a'.repeat(9 * 1024)}`, 'invalid_request', 'the bearer token is too large'],
  ])('refuses %s with 401', async (_label, authorization, error, description) => {
    const res = await post(`${s.proxy.url}/mcp`, INIT_BODY, { authorization });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain(`error="${error}"`);
    expect(res.json).toMatchObject({ error: { data: { error, error_description: description } } });
  });

  it('refuses a header too large for any server with 431 before authentication', async () => {
    const res = await post(`${s.proxy.url}/mcp`, INIT_BODY, {
      authorization: `Bearer ${'a'.repeat(20 * 1024)}`,
    });
    expect(res.status).toBe(431);
  });

  it('refuses a token for another audience', async () => {
    const token = await idp.token('alice', { resource: 'https://someone-else.example/mcp' });
    const res = await post(`${s.proxy.url}/mcp`, INIT_BODY, { authorization: `Bearer ${token}` });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain(
      'error_description="the token was issued for another audience"',
    );
  });

  it('filters tools/list and denies a forbidden call with 403 and a message that says so', async () => {
    const token = await idp.token('alice');
    const client = await connect(s.proxy.url, token);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toEqual(['echo']);
      expect(firstText(await client.callTool({ name: 'echo', arguments: { text: 'hi' } }))).toBe('hi');
      const denied = await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }).then(
        () => undefined,
        (err: unknown) => err as Error,
      );
      expect(denied?.message).toMatch(/403/);
      expect(denied?.message).toContain(
        'Access denied: the authorization policy does not permit alice to call tool \\"add\\"',
      );
      expect(denied?.message).not.toMatch(/not found/i);
    } finally {
      await client.close();
    }
    const events = await auditEvents(s);
    const deniedEvent = events.find((e) => e.type === 'mcp_tool_call' && e.target.name === 'add');
    expect(deniedEvent).toMatchObject({
      level: 'AUDIT',
      msg: 'audit_event',
      outcome: 'denied',
      component: 'wx',
      source: { type: 'network', value: '127.0.0.1' },
      subjects: { user_id: 'alice', user: 'Alice', email: 'alice@example.com' },
      target: { endpoint: '/mcp', method: 'tools/call', name: 'add', type: 'tool' },
      metadata: { extra: { transport: 'http', http_status: 403, denied_by: 'authz' } },
    });
    expect(deniedEvent!.audit_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(deniedEvent!.time)).not.toBeNaN();
    expect(typeof deniedEvent!.metadata.extra.duration_ms).toBe('number');
    expect(deniedEvent!.metadata.extra.session_id).toMatch(/\S/);
    const okEvent = events.find((e) => e.type === 'mcp_tool_call' && e.target.name === 'echo');
    expect(okEvent).toMatchObject({ outcome: 'success', metadata: { extra: { http_status: 200 } } });
    const initialize = events.find((e) => e.type === 'mcp_initialize');
    expect(initialize).toMatchObject({ outcome: 'success' });
    expect(initialize?.metadata.extra.session_id).toBe(deniedEvent!.metadata.extra.session_id);
    expect(events.find((e) => e.type === 'mcp_tools_list')).toMatchObject({ outcome: 'success' });
    // No token passthrough: the backend never sees the caller's token.
    expect(s.backend.seen.length).toBeGreaterThan(0);
    expect(s.backend.seen.filter((r) => r.headers.authorization !== undefined)).toEqual([]);
    const raw = await readFile(s.auditFile, 'utf8');
    expect(raw).not.toContain(token);
    expect(raw).not.toContain(token.split('.')[2]);
  });

  it('lets a member of a transitive group see and call everything, including the forbidden-for-others tool', async () => {
    const client = await connect(s.proxy.url, await idp.token('root'));
    try {
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(names).toEqual(['add', 'echo', 'progress', 'secret']);
      expect(firstText(await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }))).toBe('3');
      expect(firstText(await client.callTool({ name: 'secret', arguments: {} }))).toBe('the secret');
      const failedCall = await client.getPrompt({ name: 'no_such_prompt' }).then(
        () => undefined,
        (err: unknown) => err as Error,
      );
      expect(failedCall).toBeInstanceOf(Error);
    } finally {
      await client.close();
    }
    // The backend answers the unknown prompt with a JSON-RPC error: audited as an application error.
    const failed = (await auditEvents(s)).find((e) => e.target.name === 'no_such_prompt');
    expect(failed).toMatchObject({ outcome: 'application_error', subjects: { user_id: 'root' } });
    expect(typeof failed?.metadata.extra.jsonrpc_error_code).toBe('number');
  });

  it('records refused authentication in the audit log without reading the body', async () => {
    const before = (await auditEvents(s)).length;
    const res = await post(`${s.proxy.url}/mcp`, INIT_BODY, { authorization: 'Bearer not-a-jwt' });
    expect(res.status).toBe(401);
    // Earlier clients' DELETEs may land in the log meanwhile; pick this request's event.
    const events = (await auditEvents(s)).slice(before).filter((e) => e.metadata.extra.http_status === 401);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'http_request',
      outcome: 'denied',
      target: { endpoint: '/mcp', type: 'endpoint' },
      metadata: { extra: { http_status: 401 } },
    });
    // Issue 31, finding 7: before the fix, `{"user_id":"root","user":"Local user: root","local":true}`
    // (the OS user Moat runs as; here also the name of a real test user).
    expect(events[0]!.subjects).toEqual({
      user_id: 'anonymous',
      user: 'anonymous',
      anonymous: true,
      presented: 'bearer token: the token is not a JWT',
    });
  });

  it('records who a refused caller proved (nobody) and what it presented, never a known principal', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const forged = await new SignJWT({ sub: 'root' })
      .setProtectedHeader({ alg: 'RS256', kid: 'forged' })
      .setIssuer(idp.issuer)
      .setAudience(idp.jwtResource)
      .setExpirationTime('5m')
      .sign(privateKey);
    const cases: Array<[headers: Record<string, string>, presented: string]> = [
      [{}, 'none'],
      [{ authorization: 'Basic cm9vdDpyb290' }, 'authorization header: only Bearer tokens are accepted'],
      [{ authorization: `Bearer ${forged}` }, 'bearer token: no key of the issuer matches the token'],
    ];
    for (const [headers, presented] of cases) {
      const before = (await auditEvents(s)).length;
      const res = await post(`${s.proxy.url}/mcp`, INIT_BODY, headers);
      expect(res.status).toBe(401);
      const events = (await auditEvents(s)).slice(before).filter((e) => e.metadata.extra.http_status === 401);
      expect(events.map((e) => e.subjects)).toEqual([
        { user_id: 'anonymous', user: 'anonymous', anonymous: true, presented },
      ]);
    }
  });
});

describe('forwarded headers and required scopes', () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack('streamable-http', {
      trust_proxy_headers: true,
      oidc_config: oidcConfigFor(idp, { Scopes: ['mcp:admin'] }),
    });
  });
  afterAll(() => stopStack(s));

  const forwarded = {
    'x-forwarded-proto': 'https',
    'x-forwarded-host': 'mcp.example.com',
    'x-forwarded-prefix': '/team',
  };

  it('derives the resource from trusted X-Forwarded-* headers', async () => {
    const res = await fetch(`${s.proxy.url}/.well-known/oauth-protected-resource/mcp`, {
      headers: forwarded,
    });
    expect(await res.json()).toMatchObject({
      resource: 'https://mcp.example.com/team/mcp',
      scopes_supported: ['mcp:admin'],
    });
    const challenge = await post(`${s.proxy.url}/mcp`, INIT_BODY, forwarded);
    expect(challenge.headers.get('www-authenticate')).toBe(
      'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/team/mcp", scope="mcp:admin"',
    );
  });

  it('answers a token without the required scope with 403 insufficient_scope, and lets the scoped one in', async () => {
    const weak = await idp.token('alice', { scope: 'mcp:tools' });
    const res = await post(`${s.proxy.url}/mcp`, INIT_BODY, { authorization: `Bearer ${weak}` });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toContain('scope="mcp:admin", error="insufficient_scope"');
    expect(res.json).toMatchObject({ error: { data: { error: 'insufficient_scope' } } });
    const strong = await idp.token('alice', { scope: 'mcp:admin' });
    expect((await post(`${s.proxy.url}/mcp`, INIT_BODY, { authorization: `Bearer ${strong}` })).status).toBe(
      200,
    );
  });
});

describe('opaque tokens through the proxy', () => {
  it('introspects with the client secret from a secret reference', async () => {
    const backend = await startV2StreamableBackend();
    const config = testConfig({
      oidc_config: {
        Issuer: idp.issuer,
        Audience: idp.opaqueResource,
        IntrospectionURL: idp.introspectionUrl,
        ClientID: idp.introspector.clientId,
        ClientSecret: 'INTROSPECTION,target=oidc_client_secret',
        InsecureAllowHTTP: true,
        AllowPrivateIP: true,
      },
    });
    const secrets = new EnvironmentSecretsProvider({
      MOAT_SECRET_INTROSPECTION: idp.introspector.clientSecret,
    });
    const { logger } = memoryLogger();
    const proxy = await startProxy(
      config,
      { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
      { logger, secrets: () => Promise.resolve(secrets) },
    );
    try {
      const client = await connect(proxy.url, await idp.token('alice', { resource: idp.opaqueResource }));
      try {
        expect(firstText(await client.callTool({ name: 'echo', arguments: { text: 'opaque' } }))).toBe(
          'opaque',
        );
      } finally {
        await client.close();
      }
      const jwtForOthers = await idp.token('alice', { resource: idp.opaqueResource });
      const revokedLike = await post(`${proxy.url}/mcp`, INIT_BODY, {
        authorization: `Bearer x${jwtForOthers}`,
      });
      expect(revokedLike.status).toBe(401);
      expect(revokedLike.headers.get('www-authenticate')).toContain(
        'error_description="the token is not active"',
      );
    } finally {
      await proxy.close();
      await backend.close();
    }
  });
});

describe('Cedar denial over the legacy SSE transport', () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack('sse');
  });
  afterAll(() => stopStack(s));

  // Legacy SSE clients read every answer from the stream, so the proxy sends the 403 denial
  // there as a JSON-RPC error (code 403) and accepts the POST with 202.
  it('denies a forbidden call with a 403 JSON-RPC error and allows a permitted one', async () => {
    const token = await idp.token('alice');
    const headers = { authorization: `Bearer ${token}` };
    const client = new ClientV1({ name: 'sse-test', version: '1' });
    await client.connect(
      new SSEClientTransport(new URL(`${s.proxy.url}/sse`), {
        requestInit: { headers },
        eventSourceInit: {
          fetch: (url, init) =>
            fetch(url, { ...init, headers: { ...(init?.headers as object), ...headers } }),
        },
      }),
    );
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
      expect(firstText(await client.callTool({ name: 'echo', arguments: { text: 'sse' } }))).toBe('sse');
      const denied = await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }).then(
        () => undefined,
        (err: unknown) => err as Error,
      );
      expect(denied?.message).toMatch(/403/);
      expect(denied?.message).toContain('Access denied');
    } finally {
      await client.close();
    }
    const events = await auditEvents(s);
    expect(events.find((e) => e.type === 'mcp_tool_call' && e.target.name === 'add')).toMatchObject({
      outcome: 'denied',
      subjects: { user_id: 'alice' },
      metadata: { extra: { transport: 'sse', http_status: 202, denied_by: 'authz' } },
    });
    // The stream's event is written when the stream ends, which follows client.close().
    await vi.waitFor(
      async () =>
        expect((await auditEvents(s)).find((e) => e.type === 'sse_connection')).toMatchObject({
          subjects: { user_id: 'alice' },
          target: { endpoint: '/sse', type: 'endpoint' },
        }),
      { timeout: 10_000 },
    );
  });

  it('refuses the SSE stream itself without a token', async () => {
    const res = await fetch(`${s.proxy.url}/sse`, { headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('/.well-known/oauth-protected-resource/sse"');
    await res.body?.cancel();
  });
});

describe('Cedar and OIDC in front of a stdio server (the bridge)', () => {
  it('filters and denies the same way', async () => {
    const fixture = stdioFixture();
    const auditFile = join(dir, 'stdio-audit.log');
    const config = testConfig({
      transport: 'stdio',
      oidc_config: oidcConfigFor(idp),
      authz_config: {
        type: 'cedarv1',
        cedar: {
          policies: [
            'permit(principal, action == Action::"call_tool", resource == Tool::"test_simple_text");',
          ],
        },
      },
      audit_config: { logFile: auditFile },
    });
    const proxy = await startProxy(
      config,
      { kind: 'stdio', connect: () => fixture.connect() },
      { logger: memoryLogger().logger },
    );
    try {
      const client = await connect(proxy.url, await idp.token('alice'));
      try {
        expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['test_simple_text']);
        const denied = await client.callTool({ name: 'test_image_content', arguments: {} }).then(
          () => 'allowed',
          (err: unknown) => (err as Error).message,
        );
        expect(denied).toContain('Access denied: the authorization policy does not permit alice');
      } finally {
        await client.close();
      }
      const events = (await readFile(auditFile, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as AuditEvent);
      expect(events.find((e) => e.target.name === 'test_image_content')).toMatchObject({
        outcome: 'denied',
        subjects: { user_id: 'alice' },
        metadata: { extra: { http_status: 403, denied_by: 'authz' } },
      });
    } finally {
      await proxy.close();
      await fixture.stop();
    }
  });
});

describe('no authentication configured', () => {
  it('runs every request as the local user and warns on a non-loopback address', async () => {
    const { logger, lines } = memoryLogger();
    const config = testConfig({ host: '0.0.0.0', audit_config: {} });
    const security = await buildChain(config, { logger, remote: false });
    try {
      expect(security.middlewares).toHaveLength(0);
      expect(security.observers).toHaveLength(1);
      expect(security.routes).toHaveLength(0);
      expect(lines.join('')).toContain('UNAUTHENTICATED proxy on non-loopback address 0.0.0.0');
    } finally {
      await security.close();
    }
    const quiet = memoryLogger();
    const loopback = await buildChain(testConfig(), { logger: quiet.logger, remote: false });
    expect(loopback.middlewares).toHaveLength(0);
    expect(loopback.observers).toHaveLength(0);
    expect(quiet.lines.join('')).not.toContain('UNAUTHENTICATED');
    await loopback.close();
  });
});
