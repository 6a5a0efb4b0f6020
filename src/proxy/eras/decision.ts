/**
 * The one era decision: which MCP era a request is of, which eras a backend speaks (learned from
 * its answers, cached per backend, re-learned when it contradicts the cache), and so whether a
 * request goes to the backend as sent ('native') or through one of Moat's era adapters ('bridged').
 * The edge, the HTTP forwarder, the reverse direction and the stdio multiplexer all ask here.
 *
 * Rule: a backend is served every era it speaks natively; Moat bridges only what it cannot speak.
 * A backend that accepts a 2025-era `initialize` serves 2025 sessions itself, whatever its
 * `server/discover` lists (discover is itself a 2026-07-28 method, so it names only that).
 */
import type { JsonRpcMessage, JsonRpcResponse } from '../../mcp/jsonrpc.js';
import { isKnownRevision, isStatelessRevisionName, META } from '../../mcp/revisions.js';
import { isObject } from '../../util/is-object.js';

/** What the era checks read of a request: its headers (an IncomingMessage, or a policy's context). */
interface WithHeaders {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export function protocolVersionOf(req: WithHeaders): string | undefined {
  const v = req.headers['mcp-protocol-version'];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * A request's era from its `MCP-Protocol-Version` header alone: 'stateless' (2026-07-28 or
 * later), 'session' (a session revision, or no header), 'unknown' (a version Moat does not know:
 * the body decides, see `eraOfMessage`). Header only, so it costs nothing on the hot path.
 */
export function eraOfHeaders(req: WithHeaders): 'session' | 'stateless' | 'unknown' {
  const v = protocolVersionOf(req);
  if (v === undefined) return 'session';
  if (isStatelessRevisionName(v)) return 'stateless';
  return isKnownRevision(v) ? 'session' : 'unknown';
}

/** True when the request's header names the stateless revision (POST only, no sessions). */
export function isStatelessRequest(req: WithHeaders): boolean {
  return eraOfHeaders(req) === 'stateless';
}

/** Whether a message carries the 2026-07-28 `_meta` envelope (a protocolVersion in `_meta`). */
export function hasStatelessEnvelope(message: JsonRpcMessage): boolean {
  const meta = 'params' in message ? message.params?._meta : undefined;
  return isObject(meta) && META.protocolVersion in meta;
}

/**
 * A request's era, header and body: stateless when the header says so, or names a version Moat
 * does not know while the body carries the 2026-07-28 envelope (a 2026-07-28 server answers such
 * a request with the versions it supports); session otherwise.
 */
export function eraOfMessage(req: WithHeaders, message: JsonRpcMessage): 'session' | 'stateless' {
  const era = eraOfHeaders(req);
  if (era === 'unknown') return hasStatelessEnvelope(message) ? 'stateless' : 'session';
  return era;
}

/** Whether a `server/discover` result names the 2026-07-28 revision (or a later one). */
export function speaksStatelessRevision(result: unknown): result is Record<string, unknown> {
  if (typeof result !== 'object' || result === null) return false;
  const versions = (result as { supportedVersions?: unknown }).supportedVersions;
  return Array.isArray(versions) && versions.some((v) => typeof v === 'string' && isStatelessRevisionName(v));
}

/** Whether a `server/discover` answer shows the stateless revision (anything else: it does not). */
export function discoverShowsStateless(response: JsonRpcResponse | undefined): boolean {
  return speaksStatelessRevision(response?.result);
}

/** Client-facing ids of the sessions Moat's reverse direction serves itself (routing needs no store lookup). */
export const REVERSE_SESSION_PREFIX = 'm-';

/**
 * Over HTTP, who serves a request (the forwarder decides the rest, with `eraOfHeaders`):
 * 'reverse', a session Moat's reverse direction serves itself (in front of a 2026-only server);
 * 'initialize', a session-less 2025-era POST, which goes to the server as sent and to the reverse
 * direction only if it is an `initialize` the server refuses; 'forward' otherwise.
 */
export function httpRoute(
  req: WithHeaders & { readonly method?: string },
): 'forward' | 'reverse' | 'initialize' {
  if (isStatelessRequest(req)) return 'forward';
  const session = req.headers['mcp-session-id'];
  if (session !== undefined) {
    return typeof session === 'string' && session.startsWith(REVERSE_SESSION_PREFIX) ? 'reverse' : 'forward';
  }
  return req.method === 'POST' ? 'initialize' : 'forward';
}

/** How a request reaches the backend: as sent, or through Moat's era adapter. */
export type Route = 'native' | 'bridged';

/**
 * What one HTTP backend speaks, for the era decision:
 * - session eras are never assumed away: every 2025-era `initialize` goes to the backend as sent
 *   (route 'native'), and only its refusal (a JSON-RPC error answer, before any byte reached the
 *   client) sends that one session to Moat's reverse direction, when the backend names 2026-07-28
 *   in `server/discover`. So nothing about sessions is cached: each `initialize` is the test, and
 *   a backend upgraded in place is served by what it answers now;
 * - the stateless revision: asked once with `server/discover` (`detect`, run at most once at a
 *   time; a failed detection, the backend unreachable, is not cached), cached, and forgotten when
 *   the backend contradicts it (`forgetStateless`), so the next stateless request asks again.
 */
export class BackendEras<Context = void> {
  #stateless?: boolean;
  #pending?: Promise<boolean>;

  constructor(private readonly detectStateless: (context: Context) => Promise<boolean>) {}

  /** The stateless revision as known without asking (undefined before the first detection finished). */
  get knownStateless(): boolean | undefined {
    return this.#stateless;
  }

  /** Where a stateless-era request goes: asks the backend on first use, with the request's context. */
  async statelessRoute(context: Context): Promise<Route> {
    return (this.#stateless ?? (await this.speaksStateless(context))) ? 'native' : 'bridged';
  }

  /** Whether the backend speaks the stateless revision, detected on first use. */
  speaksStateless(context: Context): Promise<boolean> {
    if (this.#stateless !== undefined) return Promise.resolve(this.#stateless);
    this.#pending ??= this.detectStateless(context).then(
      (stateless) => {
        this.#stateless = stateless;
        this.#pending = undefined;
        return stateless;
      },
      (err: unknown) => {
        this.#pending = undefined;
        throw err;
      },
    );
    return this.#pending;
  }

  /** The backend contradicted what was learned (upgraded or replaced in place): ask again next time. */
  forgetStateless(): void {
    this.#stateless = undefined;
  }
}
