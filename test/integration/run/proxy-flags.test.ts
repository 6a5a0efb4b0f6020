/**
 * The HTTP-proxy and tools flags of `moat run` take effect in the real proxy in front of a real
 * container: --tools and --tools-override shape tools/list and tools/call, --allowed-origins,
 * --max-request-body-size and --strict-protocol-validation are enforced at the edge, and
 * --session-ttl / --proxy-read-timeout are stored; --stateless refuses GET, --endpoint-prefix and
 * --trust-proxy-headers shape the legacy SSE endpoint URL.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { readRunConfigFile } from '../../../src/config/runconfig-file.js';
import { testServerImage } from '../../support/images.js';
import { testTempDir } from '../../support/temp-dir.js';
import { callTool, moat, moatOk, printedUrl, testMoatHome } from '../../support/moat-cli.js';
import { uniqueName } from '../../support/podman.js';
import { readUntil } from '../../support/streams.js';

let image: string;
const home = testMoatHome();
const work = testTempDir('moat-proxy-flags-');

beforeAll(async () => {
  image = await testServerImage('stdio-server');
}, 300_000);

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};

function post(url: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body,
  });
}

describe('proxy and tools flags through moat run', { timeout: 300_000 }, () => {
  it('filter and override tools, and enforce origin, body size and protocol version', async () => {
    const name = uniqueName('pflags');
    const override = join(work, 'override.json');
    writeFileSync(
      override,
      JSON.stringify({ toolsOverride: { echo: { name: 'say', description: 'Says it back' } } }),
    );
    const url = printedUrl(
      await moatOk(home, [
        'run',
        '--transport',
        'stdio',
        '--name',
        name,
        '--tools',
        'say,get_env',
        '--tools-override',
        override,
        '--allowed-origins',
        'http://app.example.com',
        '--max-request-body-size',
        '4096',
        '--strict-protocol-validation',
        '--session-ttl',
        '10m',
        '--proxy-read-timeout',
        '20s',
        image,
      ]),
    );

    const client = new Client({ name: 'moat-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['get_env', 'say']);
      expect(tools.find((t) => t.name === 'say')?.description).toBe('Says it back');
    } finally {
      await client.close();
    }
    expect(await callTool(url, 'say', { text: 'renamed' })).toBe('renamed');

    expect((await post(url, JSON.stringify(INIT), { origin: 'http://evil.example.com' })).status).toBe(403);
    expect((await post(url, JSON.stringify(INIT), { origin: 'http://app.example.com' })).status).toBe(200);
    const big = JSON.stringify({ ...INIT, params: { ...INIT.params, pad: 'x'.repeat(8192) } });
    expect((await post(url, big)).status).toBe(413);
    expect((await post(url, JSON.stringify(INIT), { 'mcp-protocol-version': '1999-01-01' })).status).toBe(
      400,
    );

    const file = join(work, `${name}.json`);
    await moatOk(home, ['export', name, file]);
    expect(await readRunConfigFile(file)).toMatchObject({
      tools_filter: ['say', 'get_env'],
      tools_override: { echo: { name: 'say', description: 'Says it back' } },
      allowed_origins: ['http://app.example.com'],
      max_request_body_size: 4096,
      strict_protocol_validation: true,
      session_ttl: '10m0s',
      proxy_read_timeout: '20s',
    });
    await moatOk(home, ['rm', name]);
  });

  it('--stateless refuses GET; --endpoint-prefix and --trust-proxy-headers shape the legacy SSE endpoint (--proxy-mode sse)', async () => {
    const stateless = uniqueName('stateless');
    const statelessUrl = printedUrl(
      await moatOk(home, ['run', '--transport', 'stdio', '--name', stateless, '--stateless', image]),
    );
    expect((await fetch(statelessUrl, { headers: { accept: 'text/event-stream' } })).status).toBe(405);
    expect(await callTool(statelessUrl, 'echo', { text: 'stateless' })).toBe('stateless');
    await moatOk(home, ['rm', stateless]);

    const name = uniqueName('prefix');
    const started = await moat(home, [
      'run',
      '--transport',
      'stdio',
      '--proxy-mode',
      'sse',
      '--name',
      name,
      '--endpoint-prefix',
      '/tenant-a',
      '--trust-proxy-headers',
      image,
    ]);
    expect(started.code).toBe(0);
    expect(started.stderr).toContain("Warning: the 'sse' proxy mode is deprecated");
    const url = printedUrl(started.stdout);
    const controller = new AbortController();
    const sse = await fetch(new URL('/sse', url), {
      headers: {
        accept: 'text/event-stream',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'mcp.example.com',
      },
      signal: controller.signal,
    });
    expect(sse.status).toBe(200);
    const reader = sse.body!.getReader();
    const { text } = await readUntil(reader, (read) => read.includes('\n\n'));
    controller.abort();
    expect(text).toMatch(
      /event: endpoint\ndata: https:\/\/mcp\.example\.com\/tenant-a\/messages\?session_id=/,
    );
    await moatOk(home, ['rm', name]);
  });
});
