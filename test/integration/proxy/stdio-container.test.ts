/**
 * The stdio bridge over a real Podman attach: the conformance fixture in a container, SDK clients
 * (v1 and v2) through Moat, and a container restart the bridge survives (re-attach, re-initialize).
 */
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpTransportV2,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContainerRuntime } from '../../../src/runtime/types.js';
import { startConformanceContainer, type ConformanceContainer } from '../../fixtures/conformance/image.js';
import { moatInFrontOf, type MoatUnderTest } from '../../fixtures/conformance/moat.js';
import { testRuntime } from '../../support/podman.js';

function textOf(result: unknown): string {
  const first = (result as CallToolResult).content[0];
  return first?.type === 'text' ? first.text : '';
}

describe('stdio bridge attached to a Podman container', () => {
  let runtime: ContainerRuntime;
  let container: ConformanceContainer | undefined;
  let moat: MoatUnderTest | undefined;
  let attachments = 0;

  beforeAll(async () => {
    runtime = await testRuntime();
    const started = await startConformanceContainer(runtime);
    container = started;
    moat = await moatInFrontOf({
      kind: 'stdio',
      connect: () => {
        attachments++;
        return started.connect();
      },
    });
  }, 300_000);

  afterAll(async () => {
    await moat?.stop();
    if (container) await runtime.removeContainer(container.id);
  });

  it('serves v1 and v2 clients and survives a container restart', async () => {
    const url = new URL(`${moat!.proxy.url}/mcp`);
    const a = new ClientV1({ name: 'v1', version: '1' });
    const b = new ClientV2({ name: 'v2', version: '1' });
    await a.connect(new HttpTransportV1(url));
    await b.connect(new HttpTransportV2(url));
    try {
      const [ra, rb] = await Promise.all([
        a.callTool({ name: 'moat_echo', arguments: { text: 'a', delay_ms: 200 } }),
        b.callTool({ name: 'moat_echo', arguments: { text: 'b' } }),
      ]);
      expect([textOf(ra), textOf(rb)]).toEqual(['a', 'b']);
      expect(attachments).toBe(1);

      // The server process restarts; the bridge re-attaches and initializes it again, and the
      // clients keep their sessions.
      await runtime.stopContainer(container!.id, 5);
      await runtime.startContainer(container!.id);
      let echoed = '';
      for (let i = 0; i < 60 && echoed !== 'after restart'; i++) {
        try {
          echoed = textOf(await a.callTool({ name: 'moat_echo', arguments: { text: 'after restart' } }));
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
      expect(echoed).toBe('after restart');
      expect(attachments).toBeGreaterThan(1);
      expect(textOf(await b.callTool({ name: 'moat_echo', arguments: { text: 'b again' } }))).toBe('b again');
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 300_000);
});
