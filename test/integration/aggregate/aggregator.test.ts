/**
 * The aggregator with real SDK servers as members (a v2 and a v1 one, names in conflict) and real
 * SDK clients of both majors in front: merged lists under every naming strategy, routing of every
 * routed method, progress, cancellation, sampling back to the right one of two clients, pages
 * across members, and members leaving and coming back while clients are connected.
 */
import { EventEmitter, once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { AggregateNaming } from '../../../src/config/aggregate.js';
import { startAggregator, type AggregateMember, type Aggregator } from '../../../src/aggregate/index.js';
import { startV1Member, startV2Member, type MemberServer } from '../../support/aggregate-members.js';
import { startV1SseBackend } from '../../support/mcp-http-backends.js';

const WAIT_MS = 10_000;

/** Resolves with `work`, or fails naming `what` once `ms` passed. */
async function within<T>(work: Promise<T>, what: string, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop().catch(() => {})));
});

async function member(start: () => Promise<MemberServer>): Promise<MemberServer> {
  const m = await start();
  stops.push(() => m.close());
  return m;
}

/** An aggregator whose members are what `current` holds when it asks. */
async function aggregate(
  current: { members: AggregateMember[] },
  naming?: AggregateNaming,
  pageSize?: number,
  refreshMs = 100,
): Promise<Aggregator> {
  const agg = await startAggregator({
    members: () => Promise.resolve(current.members),
    naming,
    pageSize,
    refreshMs,
  });
  stops.push(() => agg.close());
  return agg;
}

const listed = (...members: MemberServer[]) => ({
  members: members.map((m) => ({ name: m.name, url: m.url, healthy: true })),
});

/** A v2 client answering sampling with `answer`; its list-changed and updated notifications go to `events`. */
async function clientV2(url: string, answer = 'v2'): Promise<{ client: Client; events: EventEmitter }> {
  const events = new EventEmitter();
  const client = new Client({ name: 'front-v2', version: '1.0.0' }, { capabilities: { sampling: {} } });
  client.setRequestHandler('sampling/createMessage', () => ({
    role: 'assistant' as const,
    content: { type: 'text' as const, text: answer },
    model: 'test',
  }));
  client.setNotificationHandler('notifications/tools/list_changed', () => void events.emit('tools'));
  client.setNotificationHandler(
    'notifications/resources/updated',
    (n) => void events.emit('updated', n.params.uri),
  );
  client.setNotificationHandler('notifications/message', (n) => void events.emit('message', n.params.data));
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  stops.push(() => client.close());
  return { client, events };
}

async function clientV1(url: string, answer = 'v1'): Promise<ClientV1> {
  const client = new ClientV1({ name: 'front-v1', version: '1.0.0' }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, () => ({
    role: 'assistant' as const,
    content: { type: 'text' as const, text: answer },
    model: 'test',
  }));
  await client.connect(new TransportV1(new URL(url)));
  stops.push(() => client.close());
  return client;
}

/** A v2 client answering elicitation (accept, answer yes) and roots/list (file:///work), not sampling. */
async function askedClient(url: string): Promise<Client> {
  const client = new Client(
    { name: 'front-elicit', version: '1.0.0' },
    { capabilities: { elicitation: {}, roots: { listChanged: true } } },
  );
  client.setRequestHandler('elicitation/create', () => ({
    action: 'accept' as const,
    content: { answer: 'yes' },
  }));
  client.setRequestHandler('roots/list', () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  stops.push(() => client.close());
  return client;
}

/** Calls the member's `progress` tool: both progress notifications and its log line reach the client. */
async function expectProgress(client: Client, events: EventEmitter, tool: string): Promise<void> {
  const progress: number[] = [];
  const logged = once(events, 'message');
  const result = await client.callTool(
    { name: tool, arguments: { tag: 'p' } },
    { onprogress: (p) => progress.push(p.progress) },
  );
  expect(textOf(result)).toBe('alpha:done:p');
  expect(progress).toEqual([1, 2]);
  expect(await within(logged, 'the member log line')).toEqual(['log:p']);
}

/** Calls the member's `slow` tool and gives up: the member's tool sees its cancellation. */
async function expectCancellation(client: Client, member: MemberServer, tool: string): Promise<void> {
  const abort = new AbortController();
  const started = once(member.events, 'started');
  const cancelled = once(member.events, 'cancelled');
  const call = client.callTool({ name: tool, arguments: {} }, { signal: abort.signal });
  call.catch(() => {});
  await within(started, 'the member to start the call');
  abort.abort('the user gave up');
  expect(await within(cancelled, 'the member to see the cancellation')).toEqual(['slow']);
  await expect(call).rejects.toThrow();
}

const textOf = (result: object) =>
  ((result as { content?: unknown }).content as Array<{ type: string; text?: string }>)
    .map((c) => c.text ?? c.type)
    .join('');
const names = (items: Array<{ name: string }>) => items.map((i) => i.name).sort();

async function errorOf(work: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await work;
  } catch (err) {
    return err as { code: number; message: string };
  }
  throw new Error('expected an error');
}

describe('aggregator: merged lists and routing', () => {
  it('prefix (default): every tool named <member>__<tool>, calls and prompts routed, both client majors', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const beta = await member(() => startV1Member('beta'));
    const agg = await aggregate(listed(alpha, beta));
    const { client } = await clientV2(agg.url);

    const tools = (await client.listTools()).tools;
    expect(names(tools)).toEqual(
      [
        'alpha__ask',
        'alpha__confirm',
        'alpha__echo',
        'alpha__gated',
        'alpha__progress',
        'alpha__requestId',
        'alpha__roots',
        'alpha__slow',
        'alpha__whoami',
        'beta__ask',
        'beta__echo',
        'beta__secret',
        'beta__whoami',
      ].sort(),
    );
    expect(tools.find((t) => t.name === 'alpha__whoami')?.description).toBe('alpha says who it is');
    expect(textOf(await client.callTool({ name: 'beta__echo', arguments: { text: 'hi' } }))).toBe('beta:hi');
    expect(textOf(await client.callTool({ name: 'alpha__echo', arguments: { text: 'hi' } }))).toBe(
      'alpha:hi',
    );
    const prompt = await client.getPrompt({ name: 'beta__greet', arguments: { who: 'carol' } });
    expect(prompt.messages[0]?.content).toMatchObject({ text: 'beta greets carol' });
    expect(agg.report().shadowed).toEqual([]);

    const v1 = await clientV1(agg.url);
    const v1Tools = (await v1.listTools()).tools;
    expect(v1Tools.map((t) => t.name)).toContain('beta__secret');
    expect(textOf(await v1.callTool({ name: 'alpha__whoami' }))).toBe('alpha');

    const unknown = await errorOf(client.callTool({ name: 'nobody__echo', arguments: {} }));
    expect(unknown.code).toBe(-32602);
  });

  it('priority: names kept, the member first in order wins, the shadowed ones reported', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const beta = await member(() => startV1Member('beta'));
    const agg = await aggregate(listed(alpha, beta), { strategy: 'priority', order: ['beta'] });
    const { client } = await clientV2(agg.url);

    expect(names((await client.listTools()).tools)).toEqual([
      'ask',
      'confirm',
      'echo',
      'gated',
      'progress',
      'requestId',
      'roots',
      'secret',
      'slow',
      'whoami',
    ]);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'x' } }))).toBe('beta:x');
    expect(textOf(await client.callTool({ name: 'progress', arguments: { tag: 't' } }))).toBe('alpha:done:t');
    const shadowed = agg.report().shadowed.filter((s) => s.kind === 'tool');
    expect(shadowed.map((s) => `${s.member}:${s.name}<${s.by}`).sort()).toEqual([
      'alpha:ask<beta',
      'alpha:echo<beta',
      'alpha:whoami<beta',
    ]);
  });

  it('manual: overrides rename and hide; a conflict left is prefixed and reported; hidden is not callable', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const beta = await member(() => startV1Member('beta'));
    const agg = await aggregate(listed(alpha, beta), {
      strategy: 'manual',
      overrides: {
        alpha: { tools: { echo: { name: 'alpha_echo' }, ask: { hidden: true } } },
        beta: { tools: { secret: { hidden: true } } },
      },
    });
    const { client } = await clientV2(agg.url);

    expect(names((await client.listTools()).tools)).toEqual([
      'alpha_echo',
      'ask',
      'beta__whoami',
      'confirm',
      'echo',
      'gated',
      'progress',
      'requestId',
      'roots',
      'slow',
      'whoami',
    ]);
    expect(textOf(await client.callTool({ name: 'alpha_echo', arguments: { text: 'a' } }))).toBe('alpha:a');
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'b' } }))).toBe('beta:b');
    expect(textOf(await client.callTool({ name: 'whoami' }))).toBe('alpha');
    expect(textOf(await client.callTool({ name: 'beta__whoami' }))).toBe('beta');
    expect((await errorOf(client.callTool({ name: 'secret' }))).code).toBe(-32602);
    expect(agg.report().shadowed).toContainEqual({
      kind: 'tool',
      member: 'beta',
      name: 'whoami',
      by: 'alpha',
      exposedAs: 'beta__whoami',
    });
  });

  it('resources by URI (listed and by template), subscriptions, completions, and an unowned URI named in -32602', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const beta = await member(() => startV1Member('beta'));
    const agg = await aggregate(listed(alpha, beta));
    const { client, events } = await clientV2(agg.url);

    const uris = (await client.listResources()).resources.map((r) => r.uri).sort();
    expect(uris).toEqual(['mem://alpha/doc', 'mem://beta/doc']);
    const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    expect(templates).toEqual(['mem://alpha/items/{id}']);
    expect((await client.readResource({ uri: 'mem://beta/doc' })).contents[0]).toMatchObject({
      text: 'beta doc',
    });
    expect((await client.readResource({ uri: 'mem://alpha/items/7' })).contents[0]).toMatchObject({
      text: 'alpha item 7',
    });
    const missing = await errorOf(client.readResource({ uri: 'mem://gamma/doc' }));
    expect(missing.code).toBe(-32602);
    expect(missing.message).toContain('mem://gamma/doc');

    const subscribed = once(alpha.events, 'subscribed');
    await client.subscribeResource({ uri: 'mem://alpha/doc' });
    await within(subscribed, 'the member to see the subscription');
    const updated = once(events, 'updated');
    await alpha.resourceUpdated('mem://alpha/doc');
    expect(await within(updated, 'notifications/resources/updated')).toEqual(['mem://alpha/doc']);

    const byPrompt = await client.complete({
      ref: { type: 'ref/prompt', name: 'alpha__greet' },
      argument: { name: 'who', value: 'al' },
    });
    expect(byPrompt.completion.values).toEqual(['alice', 'albert']);
    const byTemplate = await client.complete({
      ref: { type: 'ref/resource', uri: 'mem://alpha/items/{id}' },
      argument: { name: 'id', value: '1' },
    });
    expect(byTemplate.completion.values).toEqual(['17']);
  });

  it('relays progress and the member log line with the front token, forwards the log level; cancellation reaches the member', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const agg = await aggregate(listed(alpha));
    const { client, events } = await clientV2(agg.url);
    await expectProgress(client, events, 'alpha__progress');

    // logging/setLevel reaches the member: its info line no longer comes (it would precede the result).
    await client.setLoggingLevel('error');
    const lines: unknown[] = [];
    events.on('message', (data) => lines.push(data));
    expect(textOf(await client.callTool({ name: 'alpha__progress', arguments: { tag: 'q' } }))).toBe(
      'alpha:done:q',
    );
    expect(lines).toEqual([]);
    await expectCancellation(client, alpha, 'alpha__slow');
  });

  it('sends a member sampling request to the client whose call caused it, with two clients connected', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const beta = await member(() => startV1Member('beta'));
    const agg = await aggregate(listed(alpha, beta));
    const one = await clientV2(agg.url, 'one');
    const two = await clientV2(agg.url, 'two');
    const v1 = await clientV1(agg.url, 'three');

    const [a, b, c, d] = await Promise.all([
      one.client.callTool({ name: 'alpha__ask', arguments: { question: 'q' } }),
      two.client.callTool({ name: 'alpha__ask', arguments: { question: 'q' } }),
      two.client.callTool({ name: 'beta__ask', arguments: { question: 'q' } }),
      v1.callTool({ name: 'beta__ask', arguments: { question: 'q' } }),
    ]);
    expect([textOf(a), textOf(b), textOf(c), textOf(d)]).toEqual([
      'alpha heard one',
      'alpha heard two',
      'beta heard two',
      'beta heard three',
    ]);
  });

  it('forwards elicitation and roots/list to the client, and offers members only the capabilities it declared', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const agg = await aggregate(listed(alpha));
    const client = await askedClient(agg.url);

    const confirmed = await client.callTool({ name: 'alpha__confirm', arguments: { question: 'ok?' } });
    expect(textOf(confirmed)).toBe('alpha got accept:yes');
    expect(textOf(await client.callTool({ name: 'alpha__roots' }))).toBe('alpha sees file:///work');
    // This client declared no sampling, so the member was not offered it: the aggregate answers its request -32601.
    const asked = await client
      .callTool({ name: 'alpha__ask', arguments: { question: 'q' } })
      .catch((e: unknown) => e);
    expect(JSON.stringify(asked)).toMatch(/Method not found/);
  });

  it('pages a merged list across members with opaque cursors; a bad cursor is -32602', async () => {
    const alpha = await member(() => startV2Member('alpha', { extra: 4 }));
    const beta = await member(() => startV1Member('beta'));
    const agg = await aggregate(listed(alpha, beta), undefined, 3);
    const { client } = await clientV2(agg.url);

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      // A raw request: the SDK's listTools walks every page itself.
      const page = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} });
      expect(page.tools.length).toBeLessThanOrEqual(3);
      seen.push(...page.tools.map((t) => t.name));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 20);
    expect(seen).toHaveLength(13 + 4);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.slice(-4)).toEqual(['beta__echo', 'beta__whoami', 'beta__secret', 'beta__ask']);
    expect(pages).toBe(6);
    const bogus = client.request({ method: 'tools/list', params: { cursor: 'bogus' } });
    expect((await errorOf(bogus)).code).toBe(-32602);
  });
});

describe('aggregator: live membership', () => {
  it('withdraws a member whose server stops, tells the client, and brings it back on its new port', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const beta = await member(() => startV1Member('beta'));
    const current = listed(alpha, beta);
    const agg = await aggregate(current);
    const { client, events } = await clientV2(agg.url);
    expect(names((await client.listTools()).tools)).toContain('alpha__echo');

    let changed = once(events, 'tools');
    await alpha.close();
    await within(changed, 'tools/list_changed after the member stopped');
    const without = names((await client.listTools()).tools);
    expect(without.filter((n) => n.startsWith('alpha__'))).toEqual([]);
    expect(without).toContain('beta__echo');
    const gone = await errorOf(client.callTool({ name: 'alpha__echo', arguments: { text: 'x' } }));
    expect(gone.code).toBe(-32602);
    expect(agg.report().members).toEqual(['beta']);

    const again = await member(() => startV2Member('alpha'));
    changed = once(events, 'tools');
    current.members = listed(again, beta).members;
    await within(changed, 'tools/list_changed after the member came back');
    expect(textOf(await client.callTool({ name: 'alpha__echo', arguments: { text: 'back' } }))).toBe(
      'alpha:back',
    );

    changed = once(events, 'tools');
    current.members = [{ ...current.members[0]!, healthy: false }, current.members[1]!];
    await within(changed, 'tools/list_changed after the member turned unhealthy');
    expect(names((await client.listTools()).tools).some((n) => n.startsWith('alpha__'))).toBe(false);
  });

  it("a member's own list change reaches every connected client, and the new tool is routed", async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const agg = await aggregate(listed(alpha));
    const one = await clientV2(agg.url);
    const two = await clientV2(agg.url);
    await Promise.all([one.client.listTools(), two.client.listTools()]);

    const changed = Promise.all([once(one.events, 'tools'), once(two.events, 'tools')]);
    alpha.addTool!('fresh');
    await within(changed, 'tools/list_changed at both clients');
    expect(names((await two.client.listTools()).tools)).toContain('alpha__fresh');
    expect(textOf(await one.client.callTool({ name: 'alpha__fresh' }))).toBe('alpha:fresh');
  });

  it('serves a member on the legacy HTTP+SSE transport (`/sse`) next to a streamable one', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const legacy = await startV1SseBackend();
    stops.push(() => legacy.close());
    const agg = await aggregate({
      members: [...listed(alpha).members, { name: 'legacy', url: legacy.url, healthy: true }],
    });
    const { client } = await clientV2(agg.url);
    expect(names((await client.listTools()).tools)).toContain('legacy__echo');
    expect(textOf(await client.callTool({ name: 'legacy__echo', arguments: { text: 'old' } }))).toBe('old');
  });

  it('a member that fails a request passes its JSON-RPC error through', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const agg = await aggregate(listed(alpha));
    const { client } = await clientV2(agg.url);
    // The member refuses a prompt without its required argument: its error, not one of the aggregate's.
    const refused = await errorOf(client.getPrompt({ name: 'alpha__greet', arguments: {} }));
    expect(refused.code).toBe(-32602);
    expect(refused.message).not.toContain('aggregate');
  });

  it('a member that restarted and forgot its sessions: calls and subscriptions go on over a new member session', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const beta = await member(() => startV1Member('beta'));
    const agg = await aggregate(listed(alpha, beta));
    const { client, events } = await clientV2(agg.url);
    expect(textOf(await client.callTool({ name: 'alpha__whoami' }))).toBe('alpha');
    await client.subscribeResource({ uri: 'mem://alpha/doc' });
    await Promise.all([alpha.dropSessions(), beta.dropSessions()]);
    const subscribedAgain = once(alpha.events, 'subscribed');
    expect(textOf(await client.callTool({ name: 'alpha__whoami' }))).toBe('alpha');
    expect(textOf(await client.callTool({ name: 'beta__whoami' }))).toBe('beta');
    // The new member session carries the subscription: an update still reaches the client.
    expect(await within(subscribedAgain, 'the subscription on the new member session')).toEqual([
      'mem://alpha/doc',
    ]);
    const updated = once(events, 'updated');
    await alpha.resourceUpdated('mem://alpha/doc');
    expect(await within(updated, 'notifications/resources/updated')).toEqual(['mem://alpha/doc']);
  });

  it('a member that went away between two refreshes: the call fails with an error naming it', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    // No refresh during the test: the aggregate still lists the member when its server is gone.
    const agg = await aggregate(listed(alpha), undefined, undefined, 60_000);
    const { client } = await clientV2(agg.url);
    await client.listTools();
    await alpha.close();
    const failed = await errorOf(client.callTool({ name: 'alpha__echo', arguments: { text: 'x' } }));
    expect(failed.code).toBe(-32603);
    expect(failed.message).toContain('aggregate member alpha');
  });

  it('a member that answers no MCP is left out of the lists, the others still served', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const junk = createServer((_req, res) => res.writeHead(500).end('no MCP here'));
    await new Promise<void>((resolve) => junk.listen(0, '127.0.0.1', () => resolve()));
    stops.push(() => new Promise<void>((resolve) => junk.close(() => resolve())));
    const { port } = junk.address() as AddressInfo;
    const agg = await aggregate({
      members: [
        ...listed(alpha).members,
        { name: 'junk', url: `http://127.0.0.1:${port}/mcp`, healthy: true },
      ],
    });
    const { client } = await clientV2(agg.url);
    const tools = names((await client.listTools()).tools);
    expect(tools).toContain('alpha__echo');
    expect(tools.some((n) => n.startsWith('junk__'))).toBe(false);
  });

  it('ends a front session idle past sessionIdleMs (its client gone without DELETE); its id still serves', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const agg = await startAggregator({
      members: () => Promise.resolve(listed(alpha).members),
      sessionIdleMs: 300,
    });
    stops.push(() => agg.close());
    const transport = new StreamableHTTPClientTransport(new URL(agg.url));
    const client = new Client({ name: 'gone', version: '1.0.0' });
    await client.connect(transport);
    await client.listTools();
    const id = transport.sessionId!;
    expect(agg.report().sessions).toBe(1);
    await client.close();
    // Watched without a request of ours (one would count as activity), for a bounded time.
    const deadline = Date.now() + WAIT_MS;
    while (agg.report().sessions > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(agg.report().sessions).toBe(0);
    const answer = await fetch(agg.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': id,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    // A client that comes back (its proxy session lives on) gets the session rebuilt from its
    // sealed id, as on a replica that never saw it (replicas.test.ts).
    expect(answer.status).toBe(200);
    expect(agg.report().sessions).toBe(1);
  });
});

/** The id the member saw on a call: the direct path's ids are the aggregate's own strings. */
const DIRECT_ID = /^moat-aggregate-call-\d+$/;

/** Raw streamable HTTP on one front session, to see the event streams themselves. */
async function rawSession(url: string) {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
  };
  const post = (message: object, signal?: AbortSignal) =>
    fetch(url, { method: 'POST', headers, body: JSON.stringify(message), signal });
  const init = await post({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  headers['mcp-session-id'] = init.headers.get('mcp-session-id')!;
  await init.text();
  await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).text();
  const resume = (lastEventId: string) =>
    fetch(url, { headers: { ...headers, 'last-event-id': lastEventId } });
  return { post, resume };
}

/** Reads an event stream until `done` holds for what was read so far (bounded). */
async function readUntil(body: ReadableStream<Uint8Array>, done: (text: string) => boolean): Promise<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const read = async () => {
    while (!done(text)) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      text += decoder.decode(value, { stream: true });
    }
  };
  await within(read(), 'the event stream');
  reader.releaseLock();
  return text;
}

const eventIds = (text: string) => [...text.matchAll(/^id: (.+)$/gm)].map((m) => m[1]!);

describe('aggregator: tools/call on an open member session (direct, without the SDK)', () => {
  it('carries the call with its own id, answers JSON or an event stream; sampling, elicitation and roots reach the client that caused them', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const beta = await member(() => startV2Member('beta', { json: true }));
    const agg = await aggregate(listed(alpha, beta));
    const one = await clientV2(agg.url, 'one');
    const two = await clientV2(agg.url, 'two');
    // Listing opens the member sessions, so the calls below go direct.
    await Promise.all([one.client.listTools(), two.client.listTools()]);
    expect(textOf(await one.client.callTool({ name: 'alpha__requestId' }))).toMatch(DIRECT_ID);
    expect(textOf(await one.client.callTool({ name: 'beta__requestId' }))).toMatch(DIRECT_ID);

    const answers = await Promise.all([
      one.client.callTool({ name: 'alpha__ask', arguments: { question: 'q' } }),
      two.client.callTool({ name: 'alpha__ask', arguments: { question: 'q' } }),
      one.client.callTool({ name: 'beta__ask', arguments: { question: 'q' } }),
      two.client.callTool({ name: 'beta__ask', arguments: { question: 'q' } }),
    ]);
    expect(answers.map(textOf)).toEqual([
      'alpha heard one',
      'alpha heard two',
      'beta heard one',
      'beta heard two',
    ]);

    const asker = await askedClient(agg.url);
    await asker.listTools();
    expect(textOf(await asker.callTool({ name: 'alpha__confirm', arguments: { question: 'ok?' } }))).toBe(
      'alpha got accept:yes',
    );
    // A member answering JSON asks on its session's own stream: the SDK client forwards that.
    expect(textOf(await asker.callTool({ name: 'beta__confirm', arguments: { question: 'ok?' } }))).toBe(
      'beta got accept:yes',
    );
    expect(textOf(await asker.callTool({ name: 'alpha__roots' }))).toBe('alpha sees file:///work');
    // Sampling it did not declare: the member session's SDK client answers -32601, as on the SDK path.
    const refused = await asker
      .callTool({ name: 'alpha__ask', arguments: { question: 'q' } })
      .catch((e: unknown) => e);
    expect(JSON.stringify(refused)).toMatch(/Method not found/);
  });

  it('relays progress and log lines, and the client’s cancellation reaches the member’s tool', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const agg = await aggregate(listed(alpha));
    const { client, events } = await clientV2(agg.url);
    await client.listTools();
    expect(textOf(await client.callTool({ name: 'alpha__requestId' }))).toMatch(DIRECT_ID);
    await expectProgress(client, events, 'alpha__progress');
    await expectCancellation(client, alpha, 'alpha__slow');
    // The session serves on.
    expect(textOf(await client.callTool({ name: 'alpha__whoami' }))).toBe('alpha');
  });

  it('a member that restarted (404 on its session): the call is answered on a new member session, then goes direct again', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const agg = await aggregate(listed(alpha));
    const { client } = await clientV2(agg.url);
    await client.listTools();
    expect(textOf(await client.callTool({ name: 'alpha__requestId' }))).toMatch(DIRECT_ID);
    await alpha.dropSessions();
    expect(textOf(await client.callTool({ name: 'alpha__whoami' }))).toBe('alpha');
    expect(textOf(await client.callTool({ name: 'alpha__requestId' }))).toMatch(DIRECT_ID);
  });

  it('a client that lost the stream of a running call resumes it with Last-Event-ID, and a finished one is replayed', async () => {
    const alpha = await member(() => startV2Member('alpha'));
    const agg = await aggregate(listed(alpha));
    const raw = await rawSession(agg.url);
    await (await raw.post({ jsonrpc: '2.0', id: 2, method: 'tools/list' })).text();

    const lost = new AbortController();
    const started = once(alpha.events, 'started');
    const call = await raw.post(
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'alpha__gated', _meta: { progressToken: 'tok' } },
      },
      lost.signal,
    );
    expect(call.headers.get('content-type')).toContain('text/event-stream');
    const before = await readUntil(call.body!, (t) => t.includes('notifications/progress'));
    await within(started, 'the member to start the call');
    lost.abort();
    const [priming, progressed] = eventIds(before);
    expect(priming).toBeDefined();
    expect(progressed).toBeDefined();

    // Resumed while the member still works: the answer comes on the new stream, nothing twice.
    const resumed = await raw.resume(progressed!);
    expect(resumed.status).toBe(200);
    alpha.events.emit('release');
    const after = await readUntil(resumed.body!, () => false);
    expect(after).not.toContain('notifications/progress');
    const answer = JSON.parse(/^data: (.*"result".*)$/m.exec(after)![1]!) as { id: number; result: object };
    expect(answer.id).toBe(3);
    expect(textOf(answer.result)).toBe('alpha:released');

    // The call is over: its stream is replayed from the session's event store.
    const replayed = await readUntil((await raw.resume(priming!)).body!, () => false);
    expect(replayed).toContain('notifications/progress');
    expect(replayed).toContain('alpha:released');
  });

  it('a call its member (answering JSON) takes over a second turns into a resumable event stream', async () => {
    const beta = await member(() => startV2Member('beta', { json: true }));
    const agg = await aggregate(listed(beta));
    const raw = await rawSession(agg.url);
    await (await raw.post({ jsonrpc: '2.0', id: 2, method: 'tools/list' })).text();

    const lost = new AbortController();
    const started = once(beta.events, 'started');
    const call = await raw.post(
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'beta__gated' } },
      lost.signal,
    );
    expect(call.headers.get('content-type')).toContain('text/event-stream');
    const [priming] = eventIds(await readUntil(call.body!, (t) => t.includes('id: ')));
    await within(started, 'the member to start the call');
    lost.abort();

    const resumed = await raw.resume(priming!);
    beta.events.emit('release');
    const after = await readUntil(resumed.body!, () => false);
    const answer = JSON.parse(/^data: (.*"result".*)$/m.exec(after)![1]!) as { id: number; result: object };
    expect(answer.id).toBe(3);
    expect(textOf(answer.result)).toBe('beta:released');
  });
});
