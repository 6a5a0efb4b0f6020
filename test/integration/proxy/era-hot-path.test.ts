/**
 * The era decision is the only era code a 2025-era request runs through over HTTP (issue 30):
 * with V8's precise coverage (call counts, through the inspector of this process, where the proxy
 * runs), a 2025-era `tools/call` through Moat to a 2025-era HTTP server calls no function of
 * `src/proxy/eras/` but those of `decision.ts` and `revisions.ts`, with the reverse direction
 * standing in front of the forwarder as it does in production.
 */
import { Session } from 'node:inspector/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { moatInFrontOf, type MoatUnderTest } from '../../fixtures/conformance/moat.js';
import { startV1StreamableBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';

let backend: HttpBackendServer;
let moat: MoatUnderTest;
const inspector = new Session();

beforeAll(async () => {
  backend = await startV1StreamableBackend({ json: true });
  moat = await moatInFrontOf({ kind: 'http', url: backend.url, transport: 'streamable-http', remote: false });
  inspector.connect();
  await inspector.post('Profiler.enable');
  await inspector.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
});
afterAll(async () => {
  await inspector.post('Profiler.stopPreciseCoverage').catch(() => {});
  inspector.disconnect();
  await moat?.stop();
  await backend?.close();
});

/** Functions of `src/proxy/` files called since the last take (taking resets the counts). */
async function calledSince(): Promise<Array<{ file: string; fn: string }>> {
  const { result } = await inspector.post('Profiler.takePreciseCoverage');
  return result.flatMap((script) => {
    const at = script.url.indexOf('/src/proxy/');
    if (at === -1) return [];
    const file = script.url.slice(at + 1).replace(/\?.*$/, '');
    return script.functions
      .filter((f) => (f.ranges[0]?.count ?? 0) > 0 && f.functionName !== '')
      .map((f) => ({ file, fn: f.functionName }));
  });
}

it('a 2025-era tools/call over HTTP runs no era code beyond the era decision', async () => {
  const client = new Client({ name: 'old-client', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(moat.proxy.endpoint)));
  try {
    await client.callTool({ name: 'echo', arguments: { text: 'warm' } });
    await calledSince();
    const result = await client.callTool({ name: 'echo', arguments: { text: 'measured' } });
    expect(JSON.stringify(result.content)).toContain('measured');
    const called = await calledSince();
    // The measurement saw the proxy's request path at all (else it would prove nothing).
    expect(called.some((c) => c.file.endsWith('http/forwarder.ts'))).toBe(true);
    // Era code: src/proxy/eras/ and each backend's era adapters (http/eras/, stdio/eras/).
    const eraCode = called.filter(
      (c) =>
        c.file.includes('/eras/') &&
        !c.file.endsWith('eras/decision.ts') &&
        !c.file.endsWith('eras/revisions.ts'),
    );
    expect(eraCode).toEqual([]);
  } finally {
    await client.close();
  }
});
