/**
 * The aggregate's 2026-07-28 face: real SDK members (a v2 and a v1 one, both 2025-era servers),
 * each behind its own Moat proxy as `moat group serve` reaches them, the aggregator over those
 * proxies, Moat's proxy in front of it, and a real v2 client pinned to 2026-07-28. The aggregate
 * answers such clients itself (its proxy does not bridge them) and sends each member request on
 * in 2026-07-28, so an input-required round of a member reaches the client intact; a merged
 * `subscriptions/listen` carries members leaving and a member's own list change. An aggregate
 * with a member that speaks only 2025 refuses 2026-07-28, and its proxy bridges instead.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { startAggregator, type AggregateMember, type Aggregator } from '../../../src/aggregate/index.js';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { STATELESS_REVISION } from '../../../src/mcp/revisions.js';
import { startV1Member, startV2Member, type MemberServer } from '../../support/aggregate-members.js';
import { memoryLogger, post, streamReader, testConfig } from '../../support/proxy-harness.js';

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop().catch(() => {});
});

/** Moat's proxy in front of an HTTP MCP server, as a member workload has. */
async function proxyFor(url: string): Promise<RunningProxy> {
  const proxy = await startProxy(
    testConfig(),
    { kind: 'http', url, transport: 'streamable-http', remote: false },
    { logger: memoryLogger().logger },
  );
  stops.push(() => proxy.close());
  return proxy;
}

async function member(start: () => Promise<MemberServer>): Promise<MemberServer> {
  const m = await start();
  stops.push(() => m.close());
  return m;
}

/** The aggregator over `current` (read every 100 ms) and Moat's proxy in front of it. */
async function aggregate(current: { members: AggregateMember[] }): Promise<{ agg: Aggregator; url: string }> {
  const agg = await startAggregator({ members: () => Promise.resolve(current.members), refreshMs: 100 });
  stops.push(() => agg.close());
  const front = await startProxy(
    testConfig(),
    { kind: 'http', url: agg.url, transport: 'streamable-http', remote: false, memberOf: agg.memberOf },
    { logger: memoryLogger().logger },
  );
  stops.push(() => front.close());
  return { agg, url: `${front.url}/mcp` };
}

async function pinnedClient(url: string): Promise<{ client: Client; asked: string[] }> {
  const asked: string[] = [];
  const client = new Client(
    { name: 'stateless', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: STATELESS_REVISION } },
      capabilities: { sampling: {}, elicitation: {} },
    },
  );
  client.setRequestHandler('elicitation/create', (request) => {
    asked.push(`elicitation:${String(request.params.message)}`);
    return { action: 'accept' as const, content: { answer: 'yes' } };
  });
  client.setRequestHandler('sampling/createMessage', (request) => {
    asked.push(JSON.stringify(request.params.messages));
    return { role: 'assistant' as const, content: { type: 'text' as const, text: 'sampled' }, model: 'test' };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  stops.push(() => client.close());
  return { client, asked };
}

const envelope = () => ({
  'io.modelcontextprotocol/protocolVersion': STATELESS_REVISION,
  'io.modelcontextprotocol/clientCapabilities': {},
});
const statelessHeaders = (method: string) => ({
  'mcp-protocol-version': STATELESS_REVISION,
  'mcp-method': method,
});
const discover = (url: string) =>
  post(
    url,
    { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope() } },
    statelessHeaders('server/discover'),
  );
const textOf = (result: { content?: unknown }) =>
  (result.content as Array<{ text?: string }>).map((c) => c.text).join('');
const listed = (entries: Array<[string, string]>) => ({
  members: entries.map(([name, url]) => ({ name, url, healthy: true })),
});

describe('aggregate: MCP 2026-07-28 clients', () => {
  it('served by the aggregate itself, every member request sent on in 2026-07-28 with its input rounds intact', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const beta = await member(() => startV1Member('beta'));
    const alphaProxy = await proxyFor(alpha.url);
    const betaProxy = await proxyFor(beta.url);
    const { agg, url } = await aggregate(
      listed([
        ['alpha', `${alphaProxy.url}/mcp`],
        ['beta', `${betaProxy.url}/mcp`],
      ]),
    );

    // The aggregator itself names 2026-07-28: its proxy serves such clients natively, not through its bridge.
    const found = await discover(agg.url);
    expect(found.status).toBe(200);
    expect(found.json).toMatchObject({
      id: 1,
      result: {
        resultType: 'complete',
        supportedVersions: expect.arrayContaining([STATELESS_REVISION]) as unknown,
        capabilities: { tools: { listChanged: true } },
      },
    });

    const { client, asked } = await pinnedClient(url);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(
      expect.arrayContaining(['alpha__echo', 'alpha__confirm', 'beta__echo', 'beta__secret']),
    );
    expect(textOf(await client.callTool({ name: 'alpha__echo', arguments: { text: 'hi' } }))).toBe(
      'alpha:hi',
    );
    expect(textOf(await client.callTool({ name: 'beta__echo', arguments: { text: 'yo' } }))).toBe('beta:yo');
    // beta asks for a sample: its proxy turns that into an input-required round, which passes the
    // aggregate untouched; the client answers it and retries, and the retry reaches beta again.
    expect(textOf(await client.callTool({ name: 'beta__ask', arguments: { question: 'sure?' } }))).toBe(
      'beta heard sampled',
    );
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('sure?');
    // alpha (a v2 SDK server) asks on its session's GET stream; its proxy's bridge carries that too.
    expect(textOf(await client.callTool({ name: 'alpha__confirm', arguments: { question: 'ok?' } }))).toBe(
      'alpha got accept:yes',
    );
    expect(asked[1]).toBe('elicitation:ok?');
    const prompt = await client.getPrompt({ name: 'alpha__greet', arguments: { who: 'ann' } });
    expect(JSON.stringify(prompt.messages)).toContain('alpha greets ann');
    const read = await client.readResource({ uri: 'mem://alpha/items/7' });
    expect(JSON.stringify(read.contents)).toContain('alpha item 7');

    // A name no member serves is the client's error, with the id it sent.
    const unknown = await post(
      url,
      {
        jsonrpc: '2.0',
        id: 'x',
        method: 'tools/call',
        params: { name: 'gamma__echo', arguments: {}, _meta: envelope() },
      },
      { ...statelessHeaders('tools/call'), 'mcp-name': 'gamma__echo' },
    );
    expect(unknown.json).toMatchObject({
      id: 'x',
      error: { code: -32602, message: 'unknown tool: gamma__echo' },
    });
  });

  it('subscriptions/listen: a member leaving and a member changing its own list reach the stream, stamped', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const beta = await member(() => startV1Member('beta'));
    const alphaProxy = await proxyFor(alpha.url);
    const betaProxy = await proxyFor(beta.url);
    const current = listed([
      ['alpha', `${alphaProxy.url}/mcp`],
      ['beta', `${betaProxy.url}/mcp`],
    ]);
    const { url } = await aggregate(current);
    const { client } = await pinnedClient(url);

    const controller = new AbortController();
    stops.push(() => Promise.resolve(controller.abort()));
    const listen = await fetch(url, {
      method: 'POST',
      signal: controller.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...statelessHeaders('subscriptions/listen'),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'sub-1',
        method: 'subscriptions/listen',
        params: { notifications: { toolsListChanged: true }, _meta: envelope() },
      }),
    });
    expect(listen.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const stream = streamReader(listen);
    const changes = (messages: Array<Record<string, unknown>>) =>
      messages.filter((m) => m.method === 'notifications/tools/list_changed');
    const [ack] = await stream.until((m) => m.length >= 1);
    expect(ack).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: {
        notifications: { toolsListChanged: true },
        _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub-1' },
      },
    });

    // beta leaves the group: its tools go, and the stream says so.
    current.members = current.members.filter((m) => m.name !== 'beta');
    const seen = await stream.until((m) => changes(m).length >= 1);
    expect(changes(seen)[0]).toMatchObject({
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub-1' } },
    });
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names.some((n) => n.startsWith('beta__'))).toBe(false);

    // alpha adds a tool of its own: its proxy's listen tells the aggregate, which tells the stream.
    const before = changes(seen).length;
    alpha.addTool!('late');
    await stream.until((m) => changes(m).length > before);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('alpha__late');
    expect(textOf(await client.callTool({ name: 'alpha__late', arguments: {} }))).toBe('alpha:late');
    controller.abort();
  });

  it('a member that speaks only 2025: the aggregate refuses 2026-07-28, and its proxy bridges those clients', async () => {
    const beta = await member(() => startV1Member('beta'));
    const { agg, url } = await aggregate(listed([['beta', beta.url]]));
    const refused = await discover(agg.url);
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(refused.json ?? refused.text)).not.toContain('supportedVersions');

    const { client } = await pinnedClient(url);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('beta__echo');
    expect(textOf(await client.callTool({ name: 'beta__echo', arguments: { text: 'hi' } }))).toBe('beta:hi');
  });
});
