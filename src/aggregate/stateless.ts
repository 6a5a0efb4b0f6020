/**
 * The aggregate's 2026-07-28 face. A stateless request (its `MCP-Protocol-Version` a stateless
 * revision) is answered here, not by the session-era SDK server: `server/discover` and the merged
 * lists by the aggregate, and every request that belongs to one member (`tools/call`,
 * `prompts/get`, `resources/read`, `completion/complete`) sent on to that member's proxy in
 * 2026-07-28 as the client wrote it, only the name changed — so per-request capabilities,
 * input-required rounds and log levels reach the member intact. The face speaks 2026-07-28 only
 * while every member does (a member's Moat proxy always does); otherwise its `server/discover`
 * refuses, and the aggregate's own proxy bridges 2026-07-28 clients to its session face.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { ProtocolError } from '@modelcontextprotocol/server';
import { envelopeProblem } from '../mcp/envelope.js';
import { InvalidMessage, isRequest, RPC, toJsonRpcMessage, type JsonRpcRequest } from '../mcp/jsonrpc.js';
import { META, SESSION_REVISIONS, STATELESS_REVISION } from '../mcp/revisions.js';
import { isObject } from '../util/is-object.js';
import { log } from '../util/log.js';
import type { Catalog, ListName } from './catalog.js';
import { CALL_TIMEOUT_MS } from './member-client.js';
import type { MemberSet } from './members.js';
import { AGGREGATE_CAPABILITIES, SERVER_INFO, type ListKind } from './session.js';
import { listenFilter, MergedListen } from './stateless-listen.js';
import { StatelessMembers, type StatelessMembersOptions } from './stateless-members.js';
import { answer, answerError, relayAnswer, sendToMember, unreachable } from './stateless-wire.js';

const LISTS: Record<string, ListName> = {
  'tools/list': 'tools',
  'prompts/list': 'prompts',
  'resources/list': 'resources',
  'resources/templates/list': 'resourceTemplates',
};

/** What a 2026-07-28 result carries besides its content (no caching hint: the lists follow the members). */
const RESULT_FIELDS = { resultType: 'complete', _meta: { [META.serverInfo]: SERVER_INFO } };

export interface StatelessFaceOptions extends StatelessMembersOptions {
  /** The aggregator's connection pools to its members. */
  agent: Dispatcher;
  pageSize: number;
  onListChanged: (kind: ListKind) => void;
}

export class StatelessFace {
  private readonly members: StatelessMembers;
  private readonly listens = new Set<MergedListen>();
  private readonly warned = new Set<string>();

  constructor(private readonly options: StatelessFaceOptions) {
    this.members = new StatelessMembers(options);
  }

  /**
   * Whether this face answers now: every available member speaks 2026-07-28. Otherwise requests
   * go to the session face, which refuses what is not a session's, so the aggregate's proxy
   * learns from `server/discover` to bridge 2026-07-28 clients.
   */
  async serves(): Promise<boolean> {
    const sessionOnly = await this.members.sessionOnlyMember();
    if (sessionOnly === undefined) return true;
    if (!this.warned.has(sessionOnly)) {
      this.warned.add(sessionOnly);
      log().warn(
        { member: sessionOnly },
        `aggregate: member ${sessionOnly} does not speak MCP ${STATELESS_REVISION}, so neither does the aggregate (its proxy bridges those clients)`,
      );
    }
    return false;
  }

  /** One session-less POST that is not an `initialize`. */
  async handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    let message;
    try {
      message = toJsonRpcMessage(body);
    } catch (err) {
      return answerError(
        req,
        res,
        err instanceof InvalidMessage ? err.id : null,
        RPC.invalidRequest,
        'Invalid Request: MCP 2026-07-28 takes one JSON-RPC message per POST',
      );
    }
    if (!isRequest(message)) {
      if ('method' in message) return void res.writeHead(202).end();
      return answerError(
        req,
        res,
        null,
        RPC.invalidRequest,
        'MCP 2026-07-28 clients send no JSON-RPC responses',
      );
    }
    const header = req.headers['mcp-protocol-version'];
    const problem = envelopeProblem(message, typeof header === 'string' ? header : undefined);
    if (problem)
      return answer(req, res, { jsonrpc: '2.0', id: message.id, error: problem.error }, problem.httpStatus);
    try {
      await this.dispatch(req, res, message);
    } catch (err) {
      if (!(err instanceof ProtocolError) || res.headersSent) throw err;
      answerError(req, res, message.id, err.code, err.message, (err as { data?: unknown }).data);
    }
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse, message: JsonRpcRequest): Promise<void> {
    const list = LISTS[message.method];
    if (list) {
      const cursor = message.params?.cursor;
      const page = (await this.members.catalog(true)).page(
        list,
        typeof cursor === 'string' ? cursor : undefined,
        this.options.pageSize,
      );
      const result = {
        [list]: page.items,
        ...(page.nextCursor && { nextCursor: page.nextCursor }),
        ttlMs: 0,
        cacheScope: 'private',
        ...RESULT_FIELDS,
      };
      return answer(req, res, { jsonrpc: '2.0', id: message.id, result });
    }
    if (message.method === 'server/discover') {
      const result = {
        supportedVersions: [...SESSION_REVISIONS, STATELESS_REVISION],
        capabilities: AGGREGATE_CAPABILITIES,
        serverInfo: SERVER_INFO,
        ttlMs: 0,
        cacheScope: 'private',
        ...RESULT_FIELDS,
      };
      return answer(req, res, { jsonrpc: '2.0', id: message.id, result });
    }
    if (message.method === 'subscriptions/listen') return this.listen(req, res, message);
    return this.route(req, res, message);
  }

  /** A request for one member: its name made the member's own, sent on, the answer streamed back. */
  private async route(req: IncomingMessage, res: ServerResponse, message: JsonRpcRequest): Promise<void> {
    const { member, params } = routing(await this.members.catalog(), message);
    const url = this.options.available().get(member);
    if (!url) throw new ProtocolError(RPC.internalError, `aggregate member ${member} is not available`);
    const stop = new AbortController();
    const closed = () => stop.abort();
    res.once('close', closed);
    try {
      const signal = AbortSignal.any([stop.signal, AbortSignal.timeout(CALL_TIMEOUT_MS)]);
      const upstream = await sendToMember(req, {
        agent: this.options.agent,
        url,
        message: { ...message, params },
        signal,
      });
      await relayAnswer(upstream, res);
    } catch (err) {
      if (!stop.signal.aborted) unreachable(req, res, message.id, member, err);
    } finally {
      res.off('close', closed);
    }
  }

  private async listen(req: IncomingMessage, res: ServerResponse, message: JsonRpcRequest): Promise<void> {
    const filter = listenFilter(message);
    if (!filter) {
      return answerError(
        req,
        res,
        message.id,
        RPC.invalidParams,
        "Invalid params: 'notifications' is required and must be a subscription filter",
      );
    }
    const listen = new MergedListen(req, res, message, filter, {
      agent: this.options.agent,
      catalog: () => this.members.catalog(),
      available: this.options.available,
      onListChanged: this.options.onListChanged,
    });
    this.listens.add(listen);
    try {
      await listen.start();
      await listen.done;
    } finally {
      this.listens.delete(listen);
    }
  }

  /** A member's list changed (said on any session or listen): lists are built again, listeners told. */
  listChanged(kind: ListKind): void {
    this.members.invalidate();
    for (const listen of this.listens) listen.listChanged(kind);
  }

  membersChanged(now: MemberSet): void {
    this.members.invalidate(now);
    for (const listen of this.listens) void listen.membersChanged(now);
  }

  async close(): Promise<void> {
    for (const listen of this.listens) listen.finish();
    await this.members.close();
  }
}

/** The member a request belongs to and its params with the member's own name; a miss is the client's error. */
function routing(
  catalog: Catalog,
  message: JsonRpcRequest,
): { member: string; params: Record<string, unknown> } {
  const params = message.params ?? {};
  const text = (key: string, from: Record<string, unknown> = params) => {
    const value = from[key];
    if (typeof value !== 'string')
      throw new ProtocolError(RPC.invalidParams, `Invalid params: ${key} must be a string`);
    return value;
  };
  switch (message.method) {
    case 'tools/call': {
      const tool = catalog.tool(text('name'));
      return { member: tool.member, params: { ...params, name: tool.name } };
    }
    case 'prompts/get': {
      const prompt = catalog.prompt(text('name'));
      return { member: prompt.member, params: { ...params, name: prompt.name } };
    }
    case 'resources/read':
      return { member: catalog.resourceOwner(text('uri')), params };
    default: {
      // completion/complete, by its reference.
      const ref = isObject(params.ref) ? params.ref : {};
      if (ref.type === 'ref/prompt') {
        const prompt = catalog.prompt(text('name', ref));
        return { member: prompt.member, params: { ...params, ref: { ...ref, name: prompt.name } } };
      }
      return { member: catalog.templateOwner(text('uri', ref)), params };
    }
  }
}
