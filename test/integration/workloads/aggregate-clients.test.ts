/**
 * `moat group serve` against real SDK clients of both majors (v1 `@modelcontextprotocol/sdk`, v2
 * `@modelcontextprotocol/client`), with the real `moat` binary on real Podman (issue 32's "Done
 * when"): one group of three members of different kinds (a stdio server in a container, an HTTP
 * server in a container, a real v2 SDK server on loopback run as a remote URL) whose tool sets
 * overlap (every member has `echo`; both containers have `get_env`). Conflicts under each naming
 * strategy; the stdio member's container killed (its tools withdrawn with `list_changed`) and
 * restarted by its supervisor (back, with `list_changed`); sampling asked by the remote member
 * answered by the one of two clients whose call caused it; OIDC + Cedar on `context.backend` at
 * the front, with the audit line naming the member.
 */
import { EventEmitter, once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { groupOfThreeNames, runGroupOfThree, type GroupOfThree } from '../../support/aggregate-group.js';
import { startV2Member, type MemberServer } from '../../support/aggregate-members.js';
import { testServerImage } from '../../support/images.js';
import { eventually, moatOk, printedUrl, testMoatHome } from '../../support/moat-cli.js';
import { oidcRunFlags, startTestOidcProvider, type TestOidcProvider } from '../../support/oidc.js';
import { podmanCli } from '../../support/podman.js';

const home = testMoatHome();
const names: GroupOfThree = groupOfThreeNames('aggc');
let remote: MemberServer;
let idp: TestOidcProvider;
let dir: string;

beforeAll(async () => {
  const [stdio, http] = await Promise.all([testServerImage('stdio-server'), testServerImage('http-server')]);
  remote = await startV2Member(names.far);
  idp = await startTestOidcProvider([{ id: 'alice' }]);
  dir = await mkdtemp(join(tmpdir(), 'moat-aggregate-clients-'));
  await runGroupOfThree(home, names, { stdio, http }, remote.url);
}, 300_000);

afterAll(async () => {
  // The workloads go with the home (testMoatHome); these after them would be fine too.
  await remote?.close();
  await idp?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close().catch(() => {})));
});

/** A connected front client, the same few operations whichever SDK major it is. */
interface FrontClient {
  major: 'v1' | 'v2';
  tools(): Promise<string[]>;
  call(tool: string, args?: Record<string, unknown>): Promise<string>;
  /** Emits `tools` on each `notifications/tools/list_changed`. */
  events: EventEmitter;
  /** The headers a raw request of this client's session carries (v2 clients). */
  sessionHeaders?: () => Record<string, string>;
}

const textOf = (result: object) =>
  ((result as { content?: unknown }).content as Array<{ type: string; text?: string }>)
    .map((c) => c.text ?? c.type)
    .join('');

const sampled = (answer: string) => ({
  role: 'assistant' as const,
  content: { type: 'text' as const, text: answer },
  model: 'test',
});

/** A v2 SDK client that answers sampling with `answer`; pass `token` to send it as a bearer token. */
async function clientV2(url: string, answer = 'from-v2', token?: string): Promise<FrontClient> {
  const events = new EventEmitter();
  const client = new Client({ name: 'agg-e2e-v2', version: '1.0.0' }, { capabilities: { sampling: {} } });
  client.setRequestHandler('sampling/createMessage', () => sampled(answer));
  client.setNotificationHandler('notifications/tools/list_changed', () => void events.emit('tools'));
  const transport = new StreamableHTTPClientTransport(
    new URL(url),
    token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : undefined,
  );
  await client.connect(transport);
  closers.push(() => client.close());
  return {
    major: 'v2',
    events,
    sessionHeaders: () => ({
      'mcp-session-id': String(transport.sessionId),
      'mcp-protocol-version': String(transport.protocolVersion),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    }),
    tools: async () => (await client.listTools()).tools.map((t) => t.name),
    call: async (name, args = {}) => textOf(await client.callTool({ name, arguments: args })),
  };
}

async function clientV1(url: string, answer = 'from-v1'): Promise<FrontClient> {
  const events = new EventEmitter();
  const client = new ClientV1({ name: 'agg-e2e-v1', version: '1.0.0' }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, () => sampled(answer));
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void events.emit('tools'));
  await client.connect(new TransportV1(new URL(url)));
  closers.push(() => client.close());
  return {
    major: 'v1',
    events,
    tools: async () => (await client.listTools()).tools.map((t) => t.name),
    call: async (name, args = {}) => textOf(await client.callTool({ name, arguments: args })),
  };
}

const bothMajors = async (url: string) => [await clientV1(url), await clientV2(url)];

/** `moat group serve` of the group under another name; returns the aggregate's URL. */
async function serve(name: string, ...flags: string[]): Promise<string> {
  return printedUrl(await moatOk(home, ['group', 'serve', names.group, '--name', name, ...flags]));
}

/** Resolves with `work`, or fails naming `what` once `ms` passed. */
async function within<T>(work: Promise<T>, what: string, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Waits (at most `ms`) for `tools/list_changed` notifications at `client` until the list it then
 * fetches satisfies `ok`; `first` is the first notification's promise, taken before the cause.
 */
async function listChangedUntil(
  client: FrontClient,
  first: Promise<unknown>,
  what: string,
  ok: (tools: string[]) => boolean,
  ms: number,
): Promise<string[]> {
  const deadline = Date.now() + ms;
  let next = first;
  for (;;) {
    await within(next, `tools/list_changed (${what})`, Math.max(1, deadline - Date.now()));
    next = once(client.events, 'tools');
    const tools = await client.tools();
    if (ok(tools)) return tools;
  }
}

describe('moat group serve with v1 and v2 SDK clients', { timeout: 300_000 }, () => {
  it('prefix (default): every member tool as <member>__<tool>, each call reaching its member', async () => {
    const { stdio, http, far } = names;
    const url = await serve('prefix-agg');
    for (const client of await bothMajors(url)) {
      const tools = await client.tools();
      expect(tools, client.major).toEqual(
        expect.arrayContaining([`${stdio}__echo`, `${http}__echo`, `${far}__echo`, `${http}__get_env`]),
      );
      expect(
        tools.filter((t) => !t.includes('__')),
        client.major,
      ).toEqual([]);
      expect(await client.call(`${stdio}__get_env`, { name: 'MEMBER' })).toBe(stdio);
      expect(await client.call(`${http}__get_env`, { name: 'MEMBER' })).toBe(http);
      expect(await client.call(`${far}__echo`, { text: client.major })).toBe(`${far}:${client.major}`);
      expect(await client.call(`${stdio}__echo`, { text: client.major })).toBe(client.major);
    }
  });

  it('priority: names kept, the first member of --priority wins, the shadowed ones are logged', async () => {
    const { stdio, http, far } = names;
    const name = 'priority-agg';
    const url = await serve(name, '--naming', 'priority', '--priority', `${http},${far},${stdio}`);
    for (const client of await bothMajors(url)) {
      const tools = await client.tools();
      expect(tools, client.major).toEqual(expect.arrayContaining(['echo', 'get_env', 'whoami', 'ask']));
      expect(
        tools.filter((t) => t.includes('__')),
        client.major,
      ).toEqual([]);
      expect(await client.call('get_env', { name: 'MEMBER' })).toBe(http); // http before stdio
      expect(await client.call('echo', { text: 'who' })).toBe('who'); // http's, not far's "far:who"
      expect(await client.call('ask', { question: 'q' })).toBe(`${far} heard from-${client.major}`);
    }
    const logs = await moatOk(home, ['logs', '--proxy', name]);
    expect(logs).toContain(`tool echo of ${stdio} conflicts with ${http}'s: not exposed`);
    expect(logs).toContain(`tool echo of ${far} conflicts with ${http}'s: not exposed`);
    expect(logs).toContain(`tool get_env of ${stdio} conflicts with ${http}'s: not exposed`);
  });

  it('manual: --naming-config renames and hides; the conflicts left are prefixed', async () => {
    const { stdio, http, far } = names;
    const file = join(dir, 'naming.json');
    await writeFile(
      file,
      JSON.stringify({
        overrides: {
          [far]: { tools: { echo: { name: 'far_echo' } } },
          [stdio]: { tools: { get_env: { hidden: true } } },
        },
      }),
    );
    const url = await serve('manual-agg', '--naming', 'manual', '--naming-config', file);
    for (const client of await bothMajors(url)) {
      const tools = await client.tools();
      expect(tools, client.major).toEqual(expect.arrayContaining(['far_echo', 'echo', 'get_env']));
      expect(
        tools.filter((t) => t.includes('get_env')),
        client.major,
      ).toEqual(['get_env']);
      expect(tools.filter((t) => t.endsWith('echo')).length, client.major).toBe(3);
      expect(await client.call('far_echo', { text: 'renamed' })).toBe(`${far}:renamed`);
      expect(await client.call('get_env', { name: 'MEMBER' })).toBe(http); // stdio's is hidden
    }
  });
});

describe('moat group serve while a member dies, and with two clients', { timeout: 300_000 }, () => {
  it("withdraws a killed container's tools with list_changed, and brings them back when it is restarted", async () => {
    const { stdio } = names;
    const url = await serve('restart-agg');
    const client = await clientV2(url);
    expect(await client.tools()).toContain(`${stdio}__echo`);

    const withdrawn = once(client.events, 'tools');
    await podmanCli(['kill', stdio]); // the container dies; its supervisor restarts it
    const without = await listChangedUntil(
      client,
      withdrawn,
      'the killed member withdrawn',
      (tools) => !tools.some((t) => t.startsWith(`${stdio}__`)),
      30_000,
    );
    expect(without).toContain(`${names.http}__echo`);

    const back = await listChangedUntil(
      client,
      once(client.events, 'tools'),
      'the restarted member back',
      (tools) => tools.includes(`${stdio}__echo`),
      120_000,
    );
    expect(back).toContain(`${names.far}__echo`);
    expect(await client.call(`${stdio}__get_env`, { name: 'MEMBER' })).toBe(stdio);
  });

  it("sends the remote member's sampling request to the client whose call caused it, of two", async () => {
    const { far } = names;
    const url = await serve('sampling-agg');
    const [v1, v2] = [await clientV1(url, 'answer-one'), await clientV2(url, 'answer-two')];
    const answers = await Promise.all([
      v1.call(`${far}__ask`, { question: 'one?' }),
      v2.call(`${far}__ask`, { question: 'two?' }),
      v1.call(`${far}__ask`, { question: 'one again?' }),
    ]);
    expect(answers).toEqual([
      `${far} heard answer-one`,
      `${far} heard answer-two`,
      `${far} heard answer-one`,
    ]);
  });
});

interface AuditLine {
  type: string;
  outcome: string;
  subjects: { user_id?: string };
  target: { name?: string; backend?: string };
  metadata?: { extra?: Record<string, unknown> };
}

describe('moat group serve with OIDC and Cedar at the front', { timeout: 300_000 }, () => {
  it("permits one member's tools by context.backend and refuses another's with 403, audited with the member", async () => {
    const { stdio, far } = names;
    const policy = join(dir, 'authz.yaml');
    const audit = join(dir, 'audit.log');
    await writeFile(
      policy,
      [
        'version: "1.0"',
        'type: cedarv1',
        'cedar:',
        '  policies:',
        `    - 'permit(principal, action, resource) when { context has backend && context.backend == "${far}" };'`,
        '',
      ].join('\n'),
    );
    await writeFile(join(dir, 'audit.json'), JSON.stringify({ logFile: audit }));
    const url = await serve(
      'secure-agg',
      ...oidcRunFlags(idp),
      '--authz-config',
      policy,
      '--audit-config',
      join(dir, 'audit.json'),
    );

    const anonymous = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(anonymous.status).toBe(401);
    await anonymous.text();

    const token = await idp.token('alice');
    const client = await clientV2(url, 'unused', token);
    const tools = await client.tools();
    expect(tools).toContain(`${far}__echo`);
    expect(tools.filter((t) => !t.startsWith(`${far}__`))).toEqual([]);
    expect(await client.call(`${far}__echo`, { text: 'allowed' })).toBe(`${far}:allowed`);
    const refused = await client.call(`${stdio}__echo`, { text: 'no' }).then(
      (text) => `allowed: ${text}`,
      (err: unknown) => (err as Error).message,
    );
    expect(refused).toContain('Access denied');
    expect(refused).toContain(`${stdio}__echo`);
    // On the wire: HTTP 403 carrying the proxy's JSON-RPC error for that request.
    const raw = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...client.sessionHeaders?.(),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 42,
        method: 'tools/call',
        params: { name: `${stdio}__whoami`, arguments: {} },
      }),
    });
    expect(raw.status).toBe(403);
    expect(await raw.json()).toMatchObject({
      jsonrpc: '2.0',
      id: 42,
      error: { message: expect.stringContaining('Access denied') as unknown },
    });

    const lines = await eventually(
      'both calls in the audit log',
      async () => {
        const events = (await readFile(audit, 'utf8').catch(() => ''))
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as AuditLine)
          .filter((e) => e.type === 'mcp_tool_call');
        return events.length >= 3 ? events : undefined;
      },
      30_000,
    );
    const line = (tool: string) => lines.find((e) => e.target.name === tool);
    expect(line(`${far}__echo`)).toMatchObject({
      outcome: 'success',
      subjects: { user_id: 'alice' },
      target: { backend: far },
    });
    expect(line(`${stdio}__echo`)).toMatchObject({
      outcome: 'denied',
      subjects: { user_id: 'alice' },
      target: { backend: stdio },
      metadata: { extra: { denied_by: 'authz', http_status: 403 } },
    });
  });
});
