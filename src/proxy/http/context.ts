/** What the streamable-HTTP and legacy-SSE forwarders share. */
import type { HttpBackend, TransportOptions } from '../types.js';
import { reject } from '../pipeline/errors.js';
import { type EdgeRequest, type SessionRecord, type SessionStore } from '../types.js';
import { errorMessage, isMoatError } from '../../util/errors.js';
import type { PendingRequests } from './pending.js';
import { discard, upstreamHeaders, upstreamUrl, type UpstreamClient } from './upstream-client.js';
import { RPC, type JsonRpcResponse } from '../../mcp/jsonrpc.js';
import type { MessageContext, MessagePolicy } from '../../mcp/policy.js';
import type { Identity } from '../../mcp/identity.js';
import { ownedBy } from '../sessions/binding.js';
import { BRIDGE_SESSION_PREFIX } from '../eras/down/backend-sessions.js';
import { messageContext as requestContext } from '../pipeline/client-policies.js';
import type { BackendEras } from '../eras/decision.js';

export interface ForwarderContext {
  backend: HttpBackend;
  options: TransportOptions;
  client: UpstreamClient;
  pending: PendingRequests;
  /** Some policy rewrites server responses, so responses must be parsed. */
  inspectsResponses: boolean;
  /** The policies for a 2025-era request (without the `statelessOnly` ones), and whether they inspect answers. */
  sessionEra: { policies: readonly MessagePolicy[]; inspectsResponses: boolean };
  /** The backend's eras (eras/decision.ts), when the reverse direction stands in front of it. */
  eras?: BackendEras<EdgeRequest>;
}

export function messageContext(
  fc: ForwarderContext,
  request: EdgeRequest,
  sessionId: string | undefined,
): MessageContext {
  return requestContext(request, fc.options.config.name, fc.backend.transport, sessionId);
}

/** Runs a session store call; a failing store is a 503 (never a false "Session not found"). */
export async function withStore<T>(
  fc: Pick<ForwarderContext, 'options'>,
  call: (store: SessionStore) => Promise<T>,
): Promise<T> {
  try {
    return await call(fc.options.sessions);
  } catch (err) {
    throw storeFailure(fc, err);
  }
}

function storeFailure(fc: Pick<ForwarderContext, 'options'>, err: unknown): Error {
  // A store that is full says so itself (e.g. the memory store's session limit).
  if (isMoatError(err)) return reject(err.httpStatus, RPC.serverError, err.message);
  fc.options.logger.error({ err: errorMessage(err) }, 'session store unavailable');
  return reject(503, RPC.serverError, 'Session store unavailable');
}

/** Loads the caller's session (undefined when unknown, expired or another principal's). */
export async function loadSession(
  fc: Pick<ForwarderContext, 'options'>,
  id: string,
  identity: Identity,
): Promise<SessionRecord | undefined> {
  // Client-chosen text: refuse absurd values before they reach the store as keys.
  // Bridge sessions (one per principal for 2026-07-28 clients) are never client-facing.
  if (id.length === 0 || id.length > 256 || id.startsWith(BRIDGE_SESSION_PREFIX)) return undefined;
  // The store called here, not through withStore: one async step and closure fewer per request.
  let record: SessionRecord | undefined;
  try {
    record = await fc.options.sessions.get(id);
  } catch (err) {
    throw storeFailure(fc, err);
  }
  return record && ownedBy(record, identity) ? record : undefined;
}

/** Refreshes a session's sliding TTL (while a stream is open); failures are only logged. */
export function touchSession(fc: Pick<ForwarderContext, 'options'>, id: string): void {
  fc.options.sessions.get(id).catch((err: unknown) => {
    fc.options.logger.warn({ err: errorMessage(err) }, 'could not refresh a session');
  });
}

export function endSession(fc: ForwarderContext, id: string): Promise<void> {
  fc.pending.forget(id);
  return fc.options.sessions.delete(id).catch((err: unknown) => {
    fc.options.logger.warn({ err: errorMessage(err) }, 'could not delete a session');
  });
}

/** Aborts the upstream exchange when the client goes away before the response is complete. */
export function abortOnClientClose(request: EdgeRequest): AbortSignal {
  const controller = new AbortController();
  request.res.once('close', () => {
    if (!request.res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/**
 * Answers a server request on the backend session `backendSessionId` in the proxy's own name (a
 * request a policy refused to pass on), with the credentials of the client's `request`, on its
 * path or at `url` (a legacy SSE server's message endpoint); no answer is awaited, failures are logged.
 */
export async function answerBackend(
  fc: ForwarderContext,
  request: EdgeRequest,
  backendSessionId: string | undefined,
  answer: JsonRpcResponse,
  url = upstreamUrl(fc.backend, request.req.url ?? '/'),
): Promise<void> {
  const headers = upstreamHeaders(request.req.headers, {
    remote: fc.backend.remote,
    clientAddress: request.clientAddress,
    externalBaseUrl: request.externalBaseUrl,
  });
  for (const name of ['mcp-method', 'mcp-name', 'last-event-id', 'content-length']) delete headers[name];
  headers['content-type'] = 'application/json';
  headers.accept = 'application/json, text/event-stream';
  if (backendSessionId !== undefined) headers['mcp-session-id'] = backendSessionId;
  try {
    const upstream = await fc.client.send({
      url,
      method: 'POST',
      headers,
      body: Buffer.from(JSON.stringify(answer)),
      identity: request.identity,
      signal: AbortSignal.timeout(fc.options.upstreamTimeoutMs),
    });
    discard(upstream.body);
  } catch (err) {
    fc.options.logger.warn(
      { err: errorMessage(err) },
      'could not answer a server request the policies refused',
    );
  }
}
