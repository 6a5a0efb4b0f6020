/**
 * A real MCP SDK server (streamable HTTP, stateless) on 127.0.0.1:0, protected by a small
 * resource-server check: it serves RFC 9728 metadata naming the test provider, answers 401 with
 * `WWW-Authenticate: Bearer resource_metadata=...` without a valid token, and records the headers
 * of every request. Its `whoami` tool returns the token's subject and the headers it was sent.
 * Also what the outbound auth tests share around it: the local caller, a scratch secrets store,
 * and a headless "browser" for logins.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestOAuthProvider } from '../../support/oauth-provider.js';
import { runConfigSchema, type RunConfig, type RunConfigInput } from '../../../src/config/runconfig.js';
import type { UpstreamAuth } from '../../../src/auth/outbound/types.js';
import { registrationSecretName } from '../../../src/auth/outbound/token-store.js';
import type { Identity } from '../../../src/mcp/identity.js';
import { EncryptedSecretsProvider } from '../../../src/secrets/encrypted.js';

export interface ProtectedServer {
  /** The MCP endpoint (…/mcp); also the RFC 8707 resource. */
  url: string;
  /** Headers of every MCP request that passed the check. */
  seen: IncomingHttpHeaders[];
  /** Tokens the server refuses from now on (simulates a revoked access token). */
  reject: Set<string>;
  /** Names another authorization server in the protected-resource metadata from now on. */
  useIssuer(issuer: string): void;
  close(): Promise<void>;
}

/** A `check` accepting a Bearer access token that `op` issued for this server (its subject). */
export function tokenFrom(op: TestOAuthProvider): ProtectedServerCheck {
  return async (authorization, resource) => {
    const token = authorization?.replace(/^Bearer\s+/i, '');
    return token ? (await op.verify(token, resource)).sub : undefined;
  };
}

/**
 * `check` returns the caller's subject for a valid Authorization header, or undefined (→ 401).
 * `issuer` is advertised in the protected-resource metadata when given.
 */
export type ProtectedServerCheck = (
  authorization: string | undefined,
  resource: string,
) => Promise<string | undefined>;

export async function startProtectedServer(options: {
  check: ProtectedServerCheck;
  issuer?: string;
  scopes?: string[];
  /** A scope every MCP request needs beyond a valid token: without it, 403 insufficient_scope (step-up). */
  requireScope?: { scope: string; has: (authorization: string) => Promise<boolean> };
  /**
   * Lets `initialize` through without a token (like servers that protect only tools); other
   * requests without one get a 401 naming `challengeScope` instead of `scopes`.
   */
  openInitialize?: { challengeScope: string[] };
}): Promise<ProtectedServer> {
  const seen: IncomingHttpHeaders[] = [];
  let issuer = options.issuer;
  const reject = new Set<string>();
  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const resource = `${origin}/mcp`;
  const metadataUrl = `${origin}/.well-known/oauth-protected-resource/mcp`;

  async function handle(req: IncomingMessage, res: ServerResponse) {
    if (req.url === '/.well-known/oauth-protected-resource/mcp' && issuer) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          resource,
          authorization_servers: [issuer],
          scopes_supported: options.scopes,
        }),
      );
      return;
    }
    if (!req.url?.startsWith('/mcp')) {
      res.writeHead(404).end();
      return;
    }
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    const open = options.openInitialize && (body as { method?: string } | undefined)?.method === 'initialize';
    const authorization = req.headers.authorization;
    const token = authorization?.replace(/^Bearer\s+/i, '');
    const subject =
      token && reject.has(token)
        ? undefined
        : await options.check(authorization, resource).catch(() => undefined);
    if (!subject && !open) {
      const named = options.openInitialize?.challengeScope ?? options.scopes;
      const scope = named ? `, scope="${named.join(' ')}"` : '';
      res.writeHead(401, {
        'content-type': 'application/json',
        'www-authenticate': `Bearer resource_metadata="${metadataUrl}"${scope}`,
      });
      res.end(JSON.stringify({ error: 'invalid_token' }));
      return;
    }
    const required = options.requireScope;
    if (subject && required && !(await required.has(authorization ?? ''))) {
      const wanted = [...(options.scopes ?? []), required.scope].join(' ');
      res.writeHead(403, {
        'content-type': 'application/json',
        'www-authenticate': `Bearer error="insufficient_scope", scope="${wanted}", resource_metadata="${metadataUrl}"`,
      });
      res.end(JSON.stringify({ error: 'insufficient_scope' }));
      return;
    }
    seen.push(req.headers);
    const mcp = new McpServer({ name: 'protected', version: '1.0.0' });
    mcp.registerTool('whoami', { description: 'The caller as the server sees it' }, () => ({
      content: [{ type: 'text', text: JSON.stringify({ subject, headers: req.headers }) }],
    }));
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  return {
    url: resource,
    seen,
    reject,
    useIssuer: (value) => (issuer = value),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** Calls `whoami` with a real MCP client whose requests carry `headers()`; returns the parsed result. */
export async function whoami(
  url: string,
  headers: () => Promise<Record<string, string>>,
): Promise<{ subject: string; headers: IncomingHttpHeaders }> {
  const client = new Client({ name: 'outbound-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: async (input, init) => {
      const merged = new Headers(init?.headers);
      for (const [k, v] of Object.entries(await headers())) merged.set(k, v);
      return fetch(input, { ...init, headers: merged });
    },
  });
  await client.connect(transport);
  try {
    const result = (await client.callTool({ name: 'whoami', arguments: {} })) as {
      content: Array<{ type: string; text: string }>;
    };
    return JSON.parse(result.content[0]!.text) as { subject: string; headers: IncomingHttpHeaders };
  } finally {
    await client.close();
  }
}

/**
 * A protected MCP server that takes the tokens of `provider()` for the scope `mcp:tools` (asked per
 * request, so a test may switch providers) and names its issuer in its metadata.
 */
export function startServerTrusting(provider: () => TestOAuthProvider): Promise<ProtectedServer> {
  return startProtectedServer({
    issuer: provider().issuer,
    scopes: ['mcp:tools'],
    check: async (authorization, resource) =>
      (await provider().verify((authorization ?? '').replace(/^Bearer\s+/i, ''), resource)).sub,
  });
}

/** The RunConfig of `moat run <remoteUrl> --remote-auth --remote-auth-skip-browser` plus `auth`. */
export function remoteAuthRunConfig(
  remoteUrl: string,
  name: string,
  auth: NonNullable<RunConfigInput['remote_auth_config']>,
): RunConfig {
  return runConfigSchema.parse({
    image: remoteUrl,
    remote_url: remoteUrl,
    name,
    transport: 'streamable-http',
    host: '127.0.0.1',
    port: 0,
    remote_auth_config: { enabled: true, skip_browser: true, timeout: 60e9, ...auth },
  });
}

/** The caller of a local `moat run` (no inbound auth): whom outbound credentials are asked for. */
export const localCaller: Identity = { subject: 'local', groups: [], claims: {}, local: true };

/** The subject the server at `url` sees when `auth` adds its headers for the local caller. */
export async function localSubject(url: string, auth: UpstreamAuth | undefined): Promise<string> {
  if (!auth) throw new Error('no outbound auth was configured');
  return (await whoami(url, () => auth.headers(localCaller))).subject;
}

/** A scratch directory holding an encrypted secrets store; `remove()` deletes both. */
export async function scratchSecrets(
  prefix: string,
): Promise<{ dir: string; secrets: EncryptedSecretsProvider; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const secrets = new EncryptedSecretsProvider(join(dir, 'secrets_encrypted'), () => Promise.resolve('pw'));
  return { dir, secrets, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** The client registration stored for `issuer`, parsed ({} when there is none). */
export async function storedRegistration(
  secrets: EncryptedSecretsProvider,
  issuer: string,
): Promise<Record<string, unknown>> {
  return JSON.parse((await secrets.get(registrationSecretName(issuer))) ?? '{}') as Record<string, unknown>;
}

type LoginResult = Awaited<ReturnType<TestOAuthProvider['login']>>;

/**
 * A `notify` for outbound auth whose "browser" is `login`: it takes the login URL Moat prints,
 * opens it with `login`, and records the URLs and the logins' outcomes in order.
 */
export function headlessBrowser(login: (url: string) => Promise<LoginResult>): {
  urls: URL[];
  logins: Array<Promise<LoginResult>>;
  notify: (message: string) => void;
} {
  const urls: URL[] = [];
  const logins: Array<Promise<LoginResult>> = [];
  return {
    urls,
    logins,
    notify: (message) => {
      const url = /https?:\/\/\S+$/.exec(message)?.[0];
      if (!url) return;
      urls.push(new URL(url));
      logins.push(login(url));
    },
  };
}
