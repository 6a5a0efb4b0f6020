/**
 * Guardrails on what the server says of its own accord: its sampling and elicitation requests and
 * its log notifications, screened on their way to the client through every backend path. A real
 * MCP SDK client (with sampling and elicitation handlers) and a real SDK server (the asking
 * fixture) behind Moat's proxy: over streamable HTTP answering in SSE (the server speaks on the
 * tool call's stream), answering in JSON (it speaks on the session's GET stream), over the legacy
 * HTTP+SSE transport, and over stdio (the multiplexer); and JSON lines from a fake backend. `redact` leaves the client the placeholder, `block` answers the server's
 * request with the guardrail error so the client never sees it, `warn` passes it and audits it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  type CreateMessageRequest,
  type ElicitRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BackendSpec } from '../../../src/proxy/types.js';
import { startProxy } from '../../../src/proxy/index.js';
import { AWS_KEY, GITHUB_TOKEN } from '../../fixtures/guardrails/asking-server.js';
import {
  startAskingBackend,
  startAskingLegacyBackend,
  type AskingBackend,
} from '../../fixtures/guardrails/asking-http.js';
import { proxyInFrontOf, startHostileBackend, VISIBLE_TOOL } from '../../support/hostile-backend.js';
import { INIT_BODY, MCP_HEADERS, memoryLogger, testConfig } from '../../support/proxy-harness.js';
import type { JsonRpcId } from '../../../src/mcp/jsonrpc.js';

const STDIO_SERVER = fileURLToPath(new URL('../../fixtures/guardrails/asking-stdio.ts', import.meta.url));

let dir: string;
const children: ChildProcess[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'moat-guardrails-server-'));
});
afterAll(async () => {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }
  await rm(dir, { recursive: true, force: true });
});

type Path = 'sse' | 'json' | 'legacy-sse' | 'stdio';

/** The backend for one path, and how to stop it. */
async function backendFor(path: Path): Promise<{ spec: BackendSpec; close: () => Promise<void> }> {
  if (path === 'stdio') {
    return {
      spec: {
        kind: 'stdio',
        connect: () => {
          const child = spawn(process.execPath, ['--import', 'tsx', STDIO_SERVER], {
            stdio: ['pipe', 'pipe', 'inherit'],
            env: { ...process.env, NODE_OPTIONS: '' },
          });
          children.push(child);
          return Promise.resolve({
            stdin: child.stdin,
            stdout: child.stdout,
            close: () => child.stdin.end(),
          });
        },
      },
      close: () => Promise.resolve(),
    };
  }
  const legacy = path === 'legacy-sse';
  const backend: AskingBackend = legacy
    ? await startAskingLegacyBackend()
    : await startAskingBackend(path === 'json');
  return {
    spec: { kind: 'http', url: backend.url, transport: legacy ? 'sse' : 'streamable-http', remote: false },
    close: () => backend.close(),
  };
}

/** What reached the client of the server's own messages. */
interface Seen {
  sampling: CreateMessageRequest['params'][];
  elicitation: ElicitRequest['params'][];
  logs: unknown[];
}

interface Run {
  client: Client;
  seen: Seen;
  logs: string[];
}

/** Runs `work` against the proxy in front of `path`'s backend; resolves with the audit log once all is closed. */
async function withProxy(path: Path, guardrails: string, work: (run: Run) => Promise<void>): Promise<string> {
  const configFile = join(dir, `guardrails-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(configFile, guardrails);
  const auditFile = join(dir, `audit-${Math.random().toString(36).slice(2)}.log`);
  const { logger, lines } = memoryLogger();
  const backend = await backendFor(path);
  const proxy = await startProxy(
    testConfig({
      guardrail_config_path: configFile,
      audit_config: { logFile: auditFile },
      ...(path === 'stdio' ? { transport: 'stdio' } : path === 'legacy-sse' ? { transport: 'sse' } : {}),
    }),
    backend.spec,
    { logger },
  );
  const seen: Seen = { sampling: [], elicitation: [], logs: [] };
  const client = new Client(
    { name: 'guardrails-server-messages', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, (request) => {
    seen.sampling.push(request.params);
    return { role: 'assistant', content: { type: 'text', text: 'a summary' }, model: 'test-model' };
  });
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    seen.elicitation.push(request.params);
    return { action: 'accept', content: { ok: true } };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    seen.logs.push(notification.params.data);
  });
  try {
    await client.connect(
      path === 'legacy-sse'
        ? new SSEClientTransport(new URL(`${proxy.url}/sse`))
        : new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`)),
    );
    await work({ client, seen, logs: lines });
    await client.close();
    // The client's stream (the GET stream, the legacy SSE stream) has its audit event once it ends.
    if (path === 'json' || path === 'legacy-sse') {
      await vi.waitFor(
        async () => expect(await readFile(auditFile, 'utf8')).toContain('"type":"sse_connection"'),
        { timeout: 10_000 },
      );
    }
  } finally {
    await client.close();
    await proxy.close();
    await backend.close();
  }
  return readFile(auditFile, 'utf8');
}

const textOf = (result: unknown): string =>
  ((result as { content: Array<{ text: string }> }).content[0] as { text: string }).text;

const samplingText = (params: CreateMessageRequest['params'] | undefined): string =>
  JSON.stringify(params?.messages[0]?.content);

const THROUGH: Record<Path, string> = {
  sse: 'an HTTP server answering in SSE',
  json: 'an HTTP server answering in JSON (the GET stream)',
  'legacy-sse': 'a legacy HTTP+SSE server',
  stdio: 'a stdio server',
};

for (const path of ['sse', 'json', 'legacy-sse', 'stdio'] as const) {
  const through = THROUGH[path];
  describe(`guardrails on the server's own messages, through ${through}`, () => {
    it('redacts a secret in a sampling request before the client sees it', async () => {
      const audit = await withProxy(path, 'to_client: redact\n', async ({ client, seen }) => {
        expect(textOf(await client.callTool({ name: 'sample', arguments: {} }))).toBe(
          'sampled: {"type":"text","text":"a summary"}',
        );
        expect(seen.sampling).toHaveLength(1);
        expect(samplingText(seen.sampling[0])).toBe(
          '{"type":"text","text":"Summarise: token [REDACTED:github-token]"}',
        );
        expect(seen.sampling[0]?.systemPrompt).toBe('Deploy key [REDACTED:aws-access-key]');
        expect(seen.sampling[0]?.maxTokens).toBe(10);
      });
      expect(audit).not.toContain(GITHUB_TOKEN);
      expect(audit).toContain(
        '{"detector":"github-token","direction":"to_client","action":"redact","path":"sampling/createMessage params.messages[0].content.text"}',
      );
    });

    it('blocks a sampling request with a secret: the server gets the guardrail error, the client nothing', async () => {
      await withProxy(path, 'to_client: block\n', async ({ client, seen, logs }) => {
        const answer = textOf(await client.callTool({ name: 'sample', arguments: {} }));
        expect(answer).toMatch(/^refused: .*Blocked by the proxy's guardrails: the request contains /);
        expect(answer).toContain('github-token');
        expect(answer).not.toContain(GITHUB_TOKEN);
        expect(seen.sampling).toEqual([]);
        expect(logs.join('')).not.toContain(GITHUB_TOKEN);
      });
    });

    it('redacts a secret in an elicitation request, keeping its schema', async () => {
      await withProxy(path, 'to_client: redact\n', async ({ client, seen }) => {
        expect(textOf(await client.callTool({ name: 'elicit', arguments: {} }))).toBe('elicited: accept');
        expect(seen.elicitation).toEqual([
          {
            message: 'Confirm the rotation of [REDACTED:aws-access-key]',
            requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
          },
        ]);
      });
    });

    it('redacts a secret in a log notification', async () => {
      await withProxy(path, 'to_client: redact\n', async ({ client, seen }) => {
        expect(textOf(await client.callTool({ name: 'log', arguments: {} }))).toBe('logged');
        // On the GET stream the log may come after the tool's answer.
        await vi.waitFor(() => expect(seen.logs).toHaveLength(1), { timeout: 10_000 });
        expect(seen.logs).toEqual(['deploying with [REDACTED:github-token]']);
      });
    });

    it('with warn, passes the sampling request as sent and audits where the secret was', async () => {
      const audit = await withProxy(path, 'to_client: warn\n', async ({ client, seen, logs }) => {
        await client.callTool({ name: 'sample', arguments: {} });
        expect(samplingText(seen.sampling[0])).toContain(GITHUB_TOKEN);
        expect(seen.sampling[0]?.systemPrompt).toBe(`Deploy key ${AWS_KEY}`);
        expect(logs.join('')).toMatch(
          /guardrails found .*github-token \(warn\).* in the server's sampling\/createMessage/,
        );
      });
      expect(audit).not.toContain(GITHUB_TOKEN);
      expect(audit).not.toContain(AWS_KEY);
      expect(audit).toContain(
        '{"detector":"github-token","direction":"to_client","action":"warn","path":"sampling/createMessage params.messages[0].content.text"}',
      );
      expect(audit).toContain(
        '{"detector":"aws-access-key","direction":"to_client","action":"warn","path":"sampling/createMessage params.systemPrompt"}',
      );
    });
  });
}

/**
 * JSON lines: a backend answering a tools/call with chunked JSON, one message a line (the
 * hostile backend, a fake: no SDK server answers so), its own messages before the answer.
 */
describe("guardrails on the server's own messages in a JSON-lines answer", () => {
  const lines = (id: JsonRpcId) =>
    [
      {
        jsonrpc: '2.0',
        method: 'notifications/message',
        params: { level: 'info', data: `with ${GITHUB_TOKEN}` },
      },
      {
        jsonrpc: '2.0',
        id: 'srv-1',
        method: 'elicitation/create',
        params: { message: `confirm ${AWS_KEY}` },
      },
      { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'done' }] } },
    ]
      .map((message) => `${JSON.stringify(message)}\n`)
      .join('');

  for (const action of ['redact', 'block'] as const) {
    it(`${action === 'redact' ? 'redacts' : 'leaves out'} each of them, line by line`, async () => {
      const backend = await startHostileBackend();
      const proxy = await proxyInFrontOf(backend, { guardrail_config: { to_client: action } });
      try {
        backend.script((_method, id) => ({
          headers: { 'content-type': 'application/json' },
          chunks: [lines(id)],
        }));
        const init = await fetch(`${proxy.url}/mcp`, {
          method: 'POST',
          headers: MCP_HEADERS,
          body: JSON.stringify(INIT_BODY),
        });
        await init.text();
        const res = await fetch(`${proxy.url}/mcp`, {
          method: 'POST',
          headers: { ...MCP_HEADERS, 'mcp-session-id': init.headers.get('mcp-session-id') as string },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 2,
            method: 'tools/call',
            params: { name: VISIBLE_TOOL },
          }),
        });
        const got = (await res.text())
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as Record<string, unknown>);
        const answer = { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'done' }] } };
        expect(got).toEqual(
          action === 'block'
            ? [answer]
            : [
                {
                  jsonrpc: '2.0',
                  method: 'notifications/message',
                  params: { level: 'info', data: 'with [REDACTED:github-token]' },
                },
                {
                  jsonrpc: '2.0',
                  id: 'srv-1',
                  method: 'elicitation/create',
                  params: { message: 'confirm [REDACTED:aws-access-key]' },
                },
                answer,
              ],
        );
      } finally {
        backend.release();
        await proxy.close();
        await backend.close();
      }
    });
  }
});
