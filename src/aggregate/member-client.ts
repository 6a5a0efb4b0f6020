/**
 * One front session's connection to one member: an SDK client on the member's own proxy URL (so
 * that workload's policies and credentials apply), declaring only the client capabilities the
 * front client declared, and the list fetches that walk every page of the member's lists.
 */
import {
  Client,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type ClientCapabilities,
  type JSONRPCMessage,
} from '@modelcontextprotocol/client';
import { ProtocolError } from '@modelcontextprotocol/server';
import type { MemberLists } from './catalog.js';

/** Connects and list fetches; tool calls and the like get CALL_TIMEOUT_MS. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** Moat's upstream default for one exchange. */
export const CALL_TIMEOUT_MS = 5 * 60_000;
/** A member listing more pages than this is cut there (a server whose cursors loop). */
const MAX_PAGES = 100;
const INTERNAL_ERROR = -32603;

const CLIENT_INFO = { name: 'moat-aggregate', version: '1.0.0' };

/** The server→client capabilities a member may use: those the front client has. */
export function forwardedCapabilities(front: ClientCapabilities | undefined): ClientCapabilities {
  const out: ClientCapabilities = {};
  if (front?.sampling) out.sampling = front.sampling;
  if (front?.elicitation) out.elicitation = front.elicitation;
  if (front?.roots) out.roots = front.roots;
  return out;
}

/** A member failure as the front client sees it: the member's JSON-RPC error as it was, else one naming the member. */
export function memberError(member: string, err: unknown): Error {
  if (err instanceof ProtocolError) return err;
  const reason = err instanceof Error ? err.message : String(err);
  return new ProtocolError(INTERNAL_ERROR, `aggregate member ${member} is unreachable or failed: ${reason}`);
}

/** A member session the SDK client opened, as the direct `tools/call` path (direct-call.ts) sends on it. */
export interface MemberSession {
  /** The member's URL as undici's request takes it (strings: every member session keeps one). */
  origin: string;
  path: string;
  /** Every POST on the session carries these (its id, its protocol version, the media types). */
  headers: Record<string, string>;
  /** Hands a message to the session's SDK client, as if it had come on the client's own stream. */
  deliver(message: JSONRPCMessage): void;
}

/** The session of a connected client, when it speaks streamable HTTP (the legacy transport has no such session). */
export function memberSession(url: string, client: Client): MemberSession | undefined {
  const transport = client.transport;
  if (!(transport instanceof StreamableHTTPClientTransport)) return undefined;
  const { sessionId, protocolVersion } = transport;
  if (!sessionId || !protocolVersion) return undefined;
  const { origin, pathname, search } = new URL(url);
  return {
    origin,
    path: `${pathname}${search}`,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sessionId,
      'mcp-protocol-version': protocolVersion,
    },
    deliver: (message) => transport.onmessage?.(message),
  };
}

/** A client on a member; `pinned`: the stateless revision it speaks (none: a 2025-era session). */
export async function connectMember(
  url: string,
  capabilities: ClientCapabilities,
  setup: (client: Client) => void,
  pinned?: string,
): Promise<Client> {
  const endpoint = new URL(url);
  const client = new Client(CLIENT_INFO, {
    capabilities,
    ...(pinned ? { versionNegotiation: { mode: { pin: pinned } } } : {}),
  });
  setup(client);
  const transport = endpoint.pathname.endsWith('/sse')
    ? new SSEClientTransport(endpoint)
    : new StreamableHTTPClientTransport(endpoint);
  try {
    await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
  } catch (err) {
    await client.close().catch(() => {});
    throw err;
  }
  return client;
}

const METHOD_NOT_FOUND = -32601;

/** Every page of one list; a member that does not answer the method (resources without templates) has none. */
async function allPages<T>(
  fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string }>,
): Promise<T[]> {
  const items: T[] = [];
  try {
    await walk(fetchPage, items);
  } catch (err) {
    if (err instanceof ProtocolError && err.code === METHOD_NOT_FOUND) return [];
    throw err;
  }
  return items;
}

async function walk<T>(
  fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string }>,
  items: T[],
): Promise<void> {
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await fetchPage(cursor);
    items.push(...answer.items);
    cursor = answer.nextCursor;
    if (!cursor) break;
  }
}

/** Every list the member's capabilities offer, all pages. */
export async function fetchLists(member: string, client: Client): Promise<MemberLists> {
  const offered = client.getServerCapabilities() ?? {};
  const options = { timeout: CONNECT_TIMEOUT_MS };
  const params = (cursor: string | undefined) => (cursor ? { cursor } : {});
  const [tools, prompts, resources, resourceTemplates] = await Promise.all([
    offered.tools
      ? allPages(async (c) => {
          const r = await client.request({ method: 'tools/list', params: params(c) }, options);
          return { items: r.tools, nextCursor: r.nextCursor };
        })
      : [],
    offered.prompts
      ? allPages(async (c) => {
          const r = await client.request({ method: 'prompts/list', params: params(c) }, options);
          return { items: r.prompts, nextCursor: r.nextCursor };
        })
      : [],
    offered.resources
      ? allPages(async (c) => {
          const r = await client.request({ method: 'resources/list', params: params(c) }, options);
          return { items: r.resources, nextCursor: r.nextCursor };
        })
      : [],
    offered.resources
      ? allPages(async (c) => {
          const r = await client.request({ method: 'resources/templates/list', params: params(c) }, options);
          return { items: r.resourceTemplates, nextCursor: r.nextCursor };
        })
      : [],
  ]);
  return { member, tools, prompts, resources, resourceTemplates };
}
