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
        'alpha__progress',
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
      'progress',
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
      'progress',
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

    const progress: number[] = [];
    const logged = once(events, 'message');
    const result = await client.callTool(
      { name: 'alpha__progress', arguments: { tag: 'p' } },
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(textOf(result)).toBe('alpha:done:p');
    expect(progress).toEqual([1, 2]);
    expect(await within(logged, 'the member log line')).toEqual(['log:p']);

    // logging/setLevel reaches the member: its info line no longer comes (it would precede the result).
    await client.setLoggingLevel('error');
    const lines: unknown[] = [];
    events.on('message', (data) => lines.push(data));
    expect(textOf(await client.callTool({ name: 'alpha__progress', arguments: { tag: 'q' } }))).toBe(
      'alpha:done:q',
    );
    expect(lines).toEqual([]);

    const abort = new AbortController();
    const started = once(alpha.events, 'started');
    const cancelled = once(alpha.events, 'cancelled');
    const call = client.callTool({ name: 'alpha__slow', arguments: {} }, { signal: abort.signal });
    call.catch(() => {});
    await within(started, 'the member to start the call');
    abort.abort('the user gave up');
    expect(await within(cancelled, 'the member to see the cancellation')).toEqual(['slow']);
    await expect(call).rejects.toThrow();
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
    const client = new Client(
      { name: 'front-elicit', version: '1.0.0' },
      { capabilities: { elicitation: {}, roots: { listChanged: true } } },
    );
    client.setRequestHandler('elicitation/create', () => ({
      action: 'accept' as const,
      content: { answer: 'yes' },
    }));
    client.setRequestHandler('roots/list', () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));
    await client.connect(new StreamableHTTPClientTransport(new URL(agg.url)));
    stops.push(() => client.close());

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
    expect(seen).toHaveLength(11 + 4);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.slice(-4)).toEqual(['beta__echo', 'beta__whoami', 'beta__secret', 'beta__ask']);
    expect(pages).toBe(5);
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
