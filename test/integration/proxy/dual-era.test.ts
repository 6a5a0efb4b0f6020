/**
 * The era decision in front of a dual-era server of the kind the ecosystem ships (the v2 SDK:
 * `server/discover` names only 2026-07-28, a 2025-11-25 `initialize` works, and its input tools
 * send the client real sampling and elicitation requests during `tools/call`): a 2025-era client
 * is served by the server's own 2025 session, so those requests reach it, over HTTP and stdio.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REVERSE_SESSION_PREFIX } from '../../../src/proxy/eras/decision.js';
import { moatInFrontOf, type MoatUnderTest } from '../../fixtures/conformance/moat.js';
import { FIXTURE_DUAL_MAIN, httpFixture, type HttpFixture } from '../../fixtures/conformance/spawn.js';
import { sendModern } from '../../support/mrtr-client.js';

let fixture: HttpFixture;
const moats: Record<'http' | 'stdio', MoatUnderTest | undefined> = { http: undefined, stdio: undefined };

beforeAll(async () => {
  fixture = await httpFixture(FIXTURE_DUAL_MAIN);
  moats.http = await moatInFrontOf({
    kind: 'http',
    url: fixture.url,
    transport: 'streamable-http',
    remote: false,
  });
  moats.stdio = await moatInFrontOf('stdio', {}, { fixtureMain: FIXTURE_DUAL_MAIN });
});
afterAll(async () => {
  await moats.http?.stop();
  await moats.stdio?.stop();
  await fixture?.stop();
});

describe.each(['http', 'stdio'] as const)('a dual-era server behind Moat over %s', (via) => {
  it('serves a 2025-era client the server’s own session: push-style sampling and elicitation work', async () => {
    const endpoint = moats[via]!.proxy.endpoint;
    const client = new Client(
      { name: 'old-client', version: '1' },
      { capabilities: { sampling: {}, elicitation: {} } },
    );
    client.setRequestHandler(CreateMessageRequestSchema, () => ({
      role: 'assistant',
      model: 'test-model',
      content: { type: 'text', text: 'four' },
    }));
    client.setRequestHandler(ElicitRequestSchema, () => ({
      action: 'accept',
      content: { response: 'yes' },
    }));
    const transport = new StreamableHTTPClientTransport(new URL(endpoint));
    await client.connect(transport);
    try {
      // A session of Moat's reverse direction would carry its prefix.
      expect(transport.sessionId).toBeDefined();
      expect(transport.sessionId?.startsWith(REVERSE_SESSION_PREFIX)).toBe(false);
      const sampled = await client.callTool({ name: 'test_sampling', arguments: { prompt: '2+2?' } });
      expect(sampled.content).toEqual([{ type: 'text', text: 'LLM response: four' }]);
      const elicited = await client.callTool({ name: 'test_elicitation', arguments: { message: 'ok?' } });
      expect(JSON.stringify(elicited.content)).toContain('action=accept');
    } finally {
      await client.close();
    }
  });

  it('answers a 2026-07-28 client too, natively', async () => {
    const listed = await sendModern(moats[via]!.proxy.endpoint, 'tools/list', {});
    expect(listed.answer.result?.resultType).toBe('complete');
    expect(JSON.stringify(listed.answer.result)).toContain('test_sampling');
    // Served natively (over stdio by a second process of the server): its own input request keys.
    const asked = await sendModern(moats[via]!.proxy.endpoint, 'tools/call', {
      name: 'test_input_required_result_elicitation',
      arguments: {},
    });
    expect(Object.keys(asked.answer.result?.inputRequests ?? {})).toEqual(['user_name']);
  });
});
