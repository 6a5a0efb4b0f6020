/**
 * Two replicas of one aggregate (issue 32: "two aggregate replicas on Redis"): each an aggregator
 * with the same members and session key, fronted by its own Moat proxy process, the proxies
 * sharing one real Redis session store. A real SDK client behind a router without stickiness (a
 * stand-in for a load balancer) initializes through A and goes on through B: B's aggregator never
 * saw the session and rebuilds it from its sealed id. Also: ids whose seal does not hold are
 * unknown, and a session its client ended stays ended where it ended.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAggregator, type AggregateMember, type Aggregator } from '../../../src/aggregate/index.js';
import { withTimeout } from '../../../src/util/timeout.js';
import { startV1Member, startV2Member, type MemberServer } from '../../support/aggregate-members.js';
import { INIT_BODY, MCP_HEADERS, testConfig } from '../../support/proxy-harness.js';
import { startProxyProcess, stopProxyProcess, type ProxyProcess } from '../../support/proxy-processes.js';
import { startRedis, type RedisServer } from '../../support/redis.js';

const WAIT_MS = 10_000;
const KEY = randomBytes(32).toString('base64');

const within = <T>(work: Promise<T>, what: string) => withTimeout(work, WAIT_MS, what);

let redis: RedisServer;
let alpha: MemberServer;
let beta: MemberServer;
const current: { members: AggregateMember[] } = { members: [] };
let aggA: Aggregator;
let aggB: Aggregator;
let a: ProxyProcess;
let b: ProxyProcess;

const aggregate = (sessionKey = KEY) =>
  startAggregator({ members: () => Promise.resolve(current.members), refreshMs: 100, sessionKey });
const front = (agg: Aggregator) =>
  startProxyProcess(testConfig({ scaling_config: { session_redis: { address: redis.address } } }), {
    kind: 'http',
    url: agg.url,
    transport: 'streamable-http',
    remote: false,
  });

beforeAll(async () => {
  redis = await startRedis();
  [alpha, beta] = await Promise.all([startV2Member('alpha'), startV1Member('beta')]);
  current.members = [alpha, beta].map((m) => ({ name: m.name, url: m.url, healthy: true }));
  [aggA, aggB] = await Promise.all([aggregate(), aggregate()]);
  [a, b] = await Promise.all([front(aggA), front(aggB)]);
}, 60_000);
afterAll(async () => {
  await Promise.all([stopProxyProcess(a), stopProxyProcess(b)]);
  await Promise.all([aggA?.close(), aggB?.close()]);
  await Promise.all([alpha?.close(), beta?.close()]);
  await redis?.stop();
});

/**
 * A client answering sampling, whose requests go where `route` says at the time (its GET stream
 * to `route.get`); `seen` counts requests per replica, `events` gets its list-changed notices.
 */
async function routedClient(route: { post: ProxyProcess; get: ProxyProcess }) {
  const seen = new Map<string, number>();
  const fetchVia: typeof fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input);
    const method = init?.method ?? 'GET';
    const replica = method === 'GET' ? route.get : route.post;
    url.host = new URL(replica.url).host;
    const key = `${replica === a ? 'A' : 'B'} ${method}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
    return fetch(url, init);
  };
  const events = new EventEmitter();
  const client = new Client({ name: 'front', version: '1.0.0' }, { capabilities: { sampling: {} } });
  client.setRequestHandler('sampling/createMessage', () => ({
    role: 'assistant' as const,
    content: { type: 'text' as const, text: 'sampled' },
    model: 'test',
  }));
  client.setNotificationHandler('notifications/tools/list_changed', () => void events.emit('tools'));
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${route.post.url}/mcp`), { fetch: fetchVia }),
  );
  return { client, seen, events };
}

const textOf = (result: object) =>
  ((result as { content?: unknown }).content as Array<{ type: string; text?: string }>)
    .map((c) => c.text ?? c.type)
    .join('');

describe('two aggregate replicas, each behind its own proxy, sessions in one Redis', () => {
  it('a session begun on A lists, calls and samples through B, then goes on through A', async () => {
    const route = { post: a, get: a };
    const { client, seen } = await routedClient(route);
    const sessionsOnB = aggB.report().sessions;
    route.post = b;

    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['alpha__echo', 'alpha__ask', 'beta__echo']));
    expect(textOf(await client.callTool({ name: 'alpha__echo', arguments: { text: 'hi' } }))).toBe(
      'alpha:hi',
    );
    expect(textOf(await client.callTool({ name: 'beta__echo', arguments: { text: 'ho' } }))).toBe('beta:ho');
    // Sampling is forwarded only to a client that declared it: B knows from the id alone.
    expect(textOf(await client.callTool({ name: 'alpha__ask', arguments: { question: 'q' } }))).toBe(
      'alpha heard sampled',
    );
    expect(aggB.report().sessions).toBe(sessionsOnB + 1);

    route.post = a;
    expect(textOf(await client.callTool({ name: 'beta__echo', arguments: { text: 'back' } }))).toBe(
      'beta:back',
    );
    expect(seen.get('A POST')).toBeGreaterThanOrEqual(3); // initialize, initialized, the last call
    // The list, three calls, and the client's answer to the sampling request (asked on B's stream).
    expect(seen.get('B POST')).toBe(5);
    await client.close();
  });

  it('the replica holding the GET stream tells the client when a member leaves, though it never saw the initialize', async () => {
    const route = { post: a, get: b };
    const { client, seen, events } = await routedClient(route);
    await client.listTools();
    await within(
      (async () => {
        while (!seen.get('B GET')) await new Promise((r) => setTimeout(r, 20));
      })(),
      'the GET stream through B',
    );
    const changed = once(events, 'tools');
    const members = current.members;
    current.members = members.filter((m) => m.name !== 'beta');
    try {
      await within(changed, 'tools list_changed on the stream through B');
      // The list comes through A, which reads the member set on its own schedule: B said it
      // changed, A follows within its refresh.
      await within(
        (async () => {
          while ((await client.listTools()).tools.some((t) => t.name === 'beta__echo'))
            await new Promise((r) => setTimeout(r, 50));
        })(),
        'beta withdrawn at A too',
      );
    } finally {
      current.members = members;
    }
    await client.close();
  });
});

describe('sealed session ids', () => {
  const initialize = async (url: string) => {
    const res = await fetch(url, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(INIT_BODY) });
    await res.text();
    return res.headers.get('mcp-session-id') as string;
  };
  const list = async (url: string, id: string, method = 'POST') => {
    const res = await fetch(url, {
      method,
      headers: { ...MCP_HEADERS, 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' },
      ...(method === 'POST' ? { body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) } : {}),
    });
    await res.text();
    return res.status;
  };

  it('an id is served by every replica with the key; a forged or foreign one is unknown', async () => {
    const id = await initialize(aggA.url);
    const [version, payload, mac] = id.split('.') as [string, string, string];
    const declared = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >;
    expect(declared.c).toEqual({});
    // Claiming sampling the client never declared breaks the seal.
    const forged = Buffer.from(JSON.stringify({ ...declared, c: { sampling: {} } })).toString('base64url');
    expect(await list(aggB.url, `${version}.${forged}.${mac}`)).toBe(404);
    const other = await aggregate(randomBytes(32).toString('base64'));
    try {
      expect(await list(other.url, id)).toBe(404);
    } finally {
      await other.close();
    }
    expect(await list(aggB.url, id)).toBe(200);
  });

  it('a session its client ended is not rebuilt where it ended', async () => {
    const id = await initialize(aggA.url);
    expect(await list(aggA.url, id, 'DELETE')).toBeLessThan(300);
    expect(await list(aggA.url, id)).toBe(404);
  });
});
