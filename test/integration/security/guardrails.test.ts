/**
 * Guardrails end to end: a real MCP SDK client and a real SDK server (streamable HTTP, answering
 * in JSON or in SSE) behind Moat's proxy. A secret in tool arguments is refused before the server
 * sees it; a secret in a tool result, and personal data in a resource, reach the client redacted;
 * `warn` lets the secret through and audits where it was (never the value). One backend is a fake
 * written here (named as such): it cuts its SSE answer in two writes inside the secret, which no
 * real server does on demand.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunConfigInput } from '../../../src/config/runconfig.js';
import { startProxy } from '../../../src/proxy/index.js';
import { memoryLogger, testConfig } from '../../support/proxy-harness.js';

// Fake credentials in their real formats (not live keys).
const AWS_KEY = 'AKIAQ3EGX7MZ2WJ4KP5N';
const GITHUB_TOKEN = 'ghp_Xq7rT2mV9pL4sK8wN3bZ6cY1dF5gH0jA2eRt';
const EMAIL = 'maria.garcia@example.com';
const IBAN = 'DE89 3704 0044 0532 0130 00';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'moat-guardrails-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Backend {
  url: string;
  /** The arguments of every tools/call the server ran. */
  calls: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

async function listen(http: Server): Promise<string> {
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
}

function closer(http: Server): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      http.close(() => resolve());
      http.closeAllConnections();
    });
}

/** A real SDK server (stateless, a server per request) answering in JSON or SSE. */
async function sdkBackend(json: boolean): Promise<Backend> {
  const calls: Backend['calls'] = [];
  const build = () => {
    const server = new McpServer({ name: 'guardrails-fixture', version: '1.0.0' });
    server.registerTool(
      'store',
      { description: 'Stores a value', inputSchema: { value: z.string() } },
      (args) => {
        calls.push(args);
        return { content: [{ type: 'text' as const, text: 'stored' }] };
      },
    );
    server.registerTool('read_env', { description: 'Reads the deploy config' }, (args) => {
      calls.push(args);
      return { content: [{ type: 'text' as const, text: `GITHUB_TOKEN=${GITHUB_TOKEN}\nREGION=eu-west-1` }] };
    });
    server.registerResource('customer', 'customer://42', { mimeType: 'text/plain' }, (uri) => ({
      contents: [{ uri: uri.href, text: `Customer 42: ${EMAIL}, pays from ${IBAN}` }],
    }));
    return server;
  };
  const http = createServer((req, res) => {
    void (async () => {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: json,
      });
      const server = build();
      res.once('close', () => void server.close());
      await server.connect(transport);
      await transport.handleRequest(req, res);
    })();
  });
  const url = await listen(http);
  return { url, calls, close: closer(http) };
}

/**
 * A fake backend: answers tools/call over SSE in two writes, the second half of the token sent
 * only after the proxy has had the first (the proxy holds an unfinished event, so the test sees
 * the whole answer or nothing).
 */
async function splittingBackend(): Promise<Backend> {
  const http = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const message = JSON.parse(Buffer.concat(chunks).toString()) as { id?: number; method: string };
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      const result =
        message.method === 'initialize'
          ? {
              protocolVersion: '2025-06-18',
              capabilities: { tools: {} },
              serverInfo: { name: 'split', version: '1' },
            }
          : { content: [{ type: 'text', text: `token: ${GITHUB_TOKEN}` }] };
      const event = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: message.id, result })}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const cut = event.indexOf(GITHUB_TOKEN) + 10;
      res.write(event.slice(0, message.method === 'initialize' ? event.length : cut), () =>
        setTimeout(() => res.end(event.slice(cut)), 50),
      );
    })();
  });
  const url = await listen(http);
  return { url, calls: [], close: closer(http) };
}

interface Run {
  client: Client;
  logs: string[];
  audit: () => Promise<string>;
}

async function withProxy(
  backend: Backend,
  guardrails: string,
  work: (run: Run) => Promise<void>,
  extra: Partial<RunConfigInput> = {},
): Promise<void> {
  const configFile = join(dir, `guardrails-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(configFile, guardrails);
  const auditFile = join(dir, `audit-${Math.random().toString(36).slice(2)}.log`);
  const { logger, lines } = memoryLogger();
  const proxy = await startProxy(
    testConfig({ guardrail_config_path: configFile, audit_config: { logFile: auditFile }, ...extra }),
    { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
    { logger },
  );
  const client = new Client({ name: 'guardrails-test', version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`)));
    await work({ client, logs: lines, audit: () => readFile(auditFile, 'utf8') });
  } finally {
    await client.close();
    await proxy.close();
    await backend.close();
  }
}

const textOf = (result: unknown): string =>
  ((result as { content: Array<{ text: string }> }).content[0] as { text: string }).text;

describe('guardrails through a real SDK client and server', () => {
  it('refuses a secret in tool arguments before the server sees it, naming the detector only', async () => {
    const backend = await sdkBackend(true);
    await withProxy(backend, 'to_server: block\n', async ({ client, logs, audit }) => {
      const refused = client.callTool({ name: 'store', arguments: { value: `key ${AWS_KEY}` } });
      await expect(refused).rejects.toThrow(/guardrails: the request contains aws-access-key/);
      await refused.catch((err: unknown) => expect(String(err)).not.toContain(AWS_KEY));
      expect(backend.calls).toEqual([]);
      // A clean call still goes through.
      expect(textOf(await client.callTool({ name: 'store', arguments: { value: 'hello' } }))).toBe('stored');
      expect(backend.calls).toEqual([{ value: 'hello' }]);
      const events = await audit();
      expect(events).toContain(
        '"guardrail_findings":[{"detector":"aws-access-key","direction":"to_server","action":"block","path":"tools/call params.arguments.value"}]',
      );
      expect(events).not.toContain(AWS_KEY);
      expect(logs.join('')).not.toContain(AWS_KEY);
    });
  });

  it('redacts personal data in tool arguments, so the server gets the placeholder', async () => {
    const backend = await sdkBackend(true);
    await withProxy(backend, 'to_server: redact\n', async ({ client }) => {
      const sent = { value: `send the invoice to ${EMAIL}` };
      expect(textOf(await client.callTool({ name: 'store', arguments: sent }))).toBe('stored');
      expect(backend.calls).toEqual([{ value: 'send the invoice to [REDACTED:email]' }]);
    });
  });

  for (const answers of ['json', 'sse'] as const) {
    it(`redacts a secret in a tool result answered in ${answers.toUpperCase()}`, async () => {
      const backend = await sdkBackend(answers === 'json');
      await withProxy(backend, 'to_client: redact\n', async ({ client, audit }) => {
        const result = await client.callTool({ name: 'read_env', arguments: {} });
        expect(textOf(result)).toBe('GITHUB_TOKEN=[REDACTED:github-token]\nREGION=eu-west-1');
        const events = await audit();
        expect(events).toContain('"detector":"github-token","direction":"to_client","action":"redact"');
        expect(events).not.toContain(GITHUB_TOKEN);
      });
    });
  }

  it('redacts a secret whose SSE event reached the proxy in two pieces, cut inside the token', async () => {
    const backend = await splittingBackend();
    await withProxy(backend, 'to_client: redact\n', async ({ client }) => {
      const result = await client.callTool({ name: 'anything', arguments: {} });
      expect(textOf(result)).toBe('token: [REDACTED:github-token]');
    });
  });

  it('redacts personal data in a resource read', async () => {
    const backend = await sdkBackend(false);
    await withProxy(backend, 'to_client: redact\n', async ({ client }) => {
      const read = await client.readResource({ uri: 'customer://42' });
      expect((read.contents[0] as { text: string }).text).toBe(
        'Customer 42: [REDACTED:email], pays from [REDACTED:iban]',
      );
    });
  });

  it('with warn, lets the secret through and audits where it was', async () => {
    const backend = await sdkBackend(true);
    await withProxy(backend, 'to_server: warn\nto_client: warn\n', async ({ client, logs, audit }) => {
      expect(textOf(await client.callTool({ name: 'store', arguments: { value: AWS_KEY } }))).toBe('stored');
      expect(backend.calls).toEqual([{ value: AWS_KEY }]);
      expect(textOf(await client.callTool({ name: 'read_env', arguments: {} }))).toContain(GITHUB_TOKEN);
      const events = await audit();
      expect(events).toContain(
        '"guardrail_findings":[{"detector":"aws-access-key","direction":"to_server","action":"warn","path":"tools/call params.arguments.value"}]',
      );
      expect(events).toContain(
        '"guardrail_findings":[{"detector":"github-token","direction":"to_client","action":"warn","path":"tools/call result.content[0].text"}]',
      );
      expect(events).not.toContain(AWS_KEY);
      expect(logs.join('')).toMatch(/guardrails found aws-access-key \(warn\) in tools\/call params/);
    });
  });
});
