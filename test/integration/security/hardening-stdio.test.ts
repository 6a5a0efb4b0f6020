/**
 * `upstream_timeout` bounds requests to stdio backends as it does HTTP ones: a real stdio server
 * (test/fixtures/stdio/slow-server.ts, a child process) that answers one tool too late. The hung
 * call fails after the configured bound with the HTTP path's error (504, or the error event on a
 * legacy SSE stream), other calls keep working meanwhile, and the late answer reaches no one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { RunConfigInput } from '../../../src/config/runconfig.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { stopChild } from '../../fixtures/conformance/spawn.js';
import { INIT_BODY, memoryLogger, messageOfAnswer, post, testConfig } from '../../support/proxy-harness.js';

const SERVER = fileURLToPath(new URL('../../fixtures/stdio/slow-server.ts', import.meta.url));
const BOUND_MS = 1000;

/** Polls (bounded in count and time) until `check` holds. */
async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const children: ChildProcess[] = [];
let stderr = '';
const { logger, lines } = memoryLogger();

/** A proxy in front of a fresh slow-server process, bounded at BOUND_MS. */
function startBounded(overrides: Partial<RunConfigInput> = {}): Promise<RunningProxy> {
  const connect = () => {
    const child = spawn(process.execPath, ['--import', 'tsx', SERVER], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    children.push(child);
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    return Promise.resolve({ stdin: child.stdin, stdout: child.stdout, close: () => child.stdin.end() });
  };
  return startProxy(
    testConfig({ transport: 'stdio', upstream_timeout: `${BOUND_MS}ms`, ...overrides }),
    { kind: 'stdio', connect },
    { logger },
  );
}

afterAll(async () => {
  await Promise.all(children.map(stopChild));
});

describe('stdio backends honour upstream_timeout (streamable HTTP clients)', () => {
  let proxy: RunningProxy;
  let url: string;
  let session: string;

  const call = (id: number, name: string, args: Record<string, unknown>) =>
    post(
      url,
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } },
      { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
    );

  beforeAll(async () => {
    proxy = await startBounded();
    url = `${proxy.url}/mcp`;
    const init = await post(url, INIT_BODY);
    expect(init.status).toBe(200);
    session = init.headers.get('mcp-session-id') ?? '';
    expect(session).not.toBe('');
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it('fails the hung call after the bound with a 504 JSON-RPC error; other calls keep working', async () => {
    const hung = call(10, 'slow', { ms: 4 * BOUND_MS });
    // While the slow call waits, another call on the same server is answered.
    const quick = await call(11, 'echo', { text: 'still here' });
    expect(quick.status).toBe(200);
    expect(messageOfAnswer(quick.text)).toMatchObject({
      id: 11,
      result: { content: [{ type: 'text', text: 'still here' }] },
    });

    const timedOut = await hung;
    expect(timedOut.status).toBe(504);
    expect(messageOfAnswer(timedOut.text)).toEqual({
      jsonrpc: '2.0',
      id: 10,
      error: {
        code: -32000,
        message: `Upstream timeout: the MCP backend did not answer within ${BOUND_MS} ms (upstream timeout)`,
      },
    });

    // The server answers late; the answer matches no pending request and is dropped.
    const answersBefore = stderr.split('\n').filter((l) => l.startsWith('answered')).length;
    await eventually(
      () => stderr.split('\n').filter((l) => l.startsWith('answered')).length > answersBefore,
      'the late answer',
    );
    await eventually(
      () => lines.some((l) => l.includes('matches no pending request')),
      'the proxy to drop the late answer',
    );
    // A call with the same client id afterwards gets its own answer, not the late one.
    const after = await call(10, 'echo', { text: 'fresh' });
    expect(messageOfAnswer(after.text)).toMatchObject({
      id: 10,
      result: { content: [{ type: 'text', text: 'fresh' }] },
    });
  });
});

describe('stdio backends honour upstream_timeout (legacy SSE clients)', () => {
  let proxy: RunningProxy;
  let client: Client;

  beforeAll(async () => {
    proxy = await startBounded({ proxy_mode: 'sse' });
    client = new Client({ name: 'sse', version: '1' });
    await client.connect(new SSEClientTransport(new URL(`${proxy.url}/sse`)));
  });
  afterAll(async () => {
    await client?.close();
    await proxy?.close();
  });

  it('delivers the timeout as the JSON-RPC error on the stream; the stream keeps serving', async () => {
    await expect(client.callTool({ name: 'slow', arguments: { ms: 4 * BOUND_MS } })).rejects.toThrow(
      `Upstream timeout: the MCP backend did not answer within ${BOUND_MS} ms (upstream timeout)`,
    );
    const result = await client.callTool({ name: 'echo', arguments: { text: 'after' } });
    expect(result.content).toEqual([{ type: 'text', text: 'after' }]);
  });
});
