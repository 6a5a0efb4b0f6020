/**
 * Legacy HTTP+SSE backends (MCP 2024-11-05): `GET <sse path>` opens the event stream whose first
 * event, `endpoint`, names the URL for POSTing messages. The proxy keeps that URL (and the
 * backend's session id in it) in the session store and hands the client its own URL instead:
 * `<external base or --endpoint-prefix><path>?sessionId=<random id>`. Any replica sharing the
 * store can forward the POSTs; the responses arrive on the stream, which one replica holds.
 */
import { randomUUID } from 'node:crypto';
import { rpcErrorBody, reject, sessionNotFound, writeRejection, ProxyRejection } from '../pipeline/errors.js';
import { readMessage } from '../pipeline/message.js';
import { applyClientPolicies } from '../pipeline/client-policies.js';
import { type EdgeRequest, type SessionRecord } from '../types.js';
import { errorMessage } from '../../util/errors.js';
import {
  abortOnClientClose,
  answerBackend,
  endSession,
  loadSession,
  messageContext,
  touchSession,
  withStore,
  type ForwarderContext,
} from './context.js';
import { policyRewriter, relayAnswer, relaySse, type EventRewriter } from './relay.js';
import { answerLabel } from '../pipeline/media-type.js';
import { withDeadline } from './deadline.js';
import { formatEvent, withData, type SseEvent } from '../../mcp/sse.js';
import { SseWriter } from '../pipeline/sse.js';
import { clientHeaders, upstreamHeaders, upstreamUrl } from './upstream-client.js';
import { isRequest, RPC, type JsonRpcMessage } from '../../mcp/jsonrpc.js';
import { ownerFields } from '../sessions/binding.js';

const SESSION_PARAMS = ['sessionId', 'session_id'] as const;

export class SseTransportForwarder {
  readonly #fc: ForwarderContext;
  /** Streams this process holds, by client session id (to deliver refusals in-band). */
  readonly #streams = new Map<string, SseWriter>();

  constructor(fc: ForwarderContext) {
    this.#fc = fc;
  }

  handle(request: EdgeRequest): Promise<void> {
    if (request.req.method === 'GET') return this.#openStream(request);
    if (request.req.method === 'POST') return this.#postMessage(request);
    throw reject(
      405,
      RPC.invalidRequest,
      'Method not allowed: the SSE transport uses GET (stream) and POST (messages)',
      {
        headers: { allow: 'GET, POST' },
      },
    );
  }

  #forwardHeaders(request: EdgeRequest): Record<string, string> {
    return upstreamHeaders(request.req.headers, {
      remote: this.#fc.backend.remote,
      clientAddress: request.clientAddress,
      externalBaseUrl: request.externalBaseUrl,
    });
  }

  /** The base the client-facing message URL starts with. */
  #endpointBase(request: EdgeRequest): string {
    const prefix = this.#fc.options.config.endpoint_prefix;
    if (prefix === undefined || prefix === '') return request.externalBaseUrl;
    const origin = new URL(request.externalBaseUrl).origin;
    return origin + `/${prefix.replace(/^\/+|\/+$/g, '')}`.replace(/^\/$/, '');
  }

  async #openStream(request: EdgeRequest): Promise<void> {
    const { req, res } = request;
    const fc = this.#fc;
    const sseUrl = upstreamUrl(fc.backend, req.url ?? '/');
    // Bounded until the stream opens; the client going away still ends it later.
    const upstream = await withDeadline(
      fc.options.upstreamTimeoutMs,
      abortOnClientClose(request),
      null,
      (d) =>
        fc.client.send({
          url: sseUrl,
          method: 'GET',
          headers: this.#forwardHeaders(request),
          identity: request.identity,
          signal: d.signal,
        }),
    );
    const isSse = answerLabel(upstream.headers) === 'sse';
    if (!isSse || upstream.statusCode !== 200) return relayAnswer(upstream, res, null, undefined);
    const outHeaders = clientHeaders(upstream.headers, true);
    outHeaders['x-accel-buffering'] = 'no';
    outHeaders['cache-control'] ??= 'no-cache';
    res.writeHead(200, outHeaders);

    let sessionId: string | undefined;
    const writer = new SseWriter(res, {
      keepAliveMs: fc.options.keepAliveMs,
      onKeepAlive: () => {
        if (sessionId) touchSession(fc, sessionId);
      },
    });
    let policyRewrite: EventRewriter | undefined;
    const rewrite = async (event: SseEvent): Promise<string> => {
      if (event.event === 'endpoint' && event.data !== undefined) {
        const minted = await this.#mintSession(request, sseUrl, event.data);
        sessionId = minted.id;
        request.annotations.sessionId = sessionId;
        this.#streams.set(sessionId, writer);
        if (fc.inspectsResponses) {
          policyRewrite = policyRewriter({
            policies: fc.options.policies,
            ctx: messageContext(fc, request, sessionId),
            lookup: (id) => fc.pending.take(minted.id, id),
            answerServer: (answer) => void answerBackend(fc, request, undefined, answer, minted.endpoint),
          });
        }
        return withData(event, minted.clientUrl);
      }
      return policyRewrite ? policyRewrite(event) : event.raw;
    };
    try {
      await relaySse(upstream, writer, rewrite);
    } catch (err) {
      // A client that left is routine; anything else (backend, store) is worth a warning.
      const level = res.destroyed ? 'debug' : 'warn';
      fc.options.logger[level]({ err: errorMessage(err) }, 'SSE stream from the MCP backend ended early');
    } finally {
      writer.stop();
      if (sessionId) {
        this.#streams.delete(sessionId);
        await endSession(fc, sessionId);
      }
    }
    res.end();
  }

  async #mintSession(
    request: EdgeRequest,
    sseUrl: string,
    endpointData: string,
  ): Promise<{ id: string; clientUrl: string; endpoint: string }> {
    const backendEndpoint = new URL(endpointData.trim(), sseUrl);
    // The backend must not direct the proxy's POSTs to another host.
    if (backendEndpoint.origin !== new URL(sseUrl).origin) {
      throw new Error(
        `the MCP backend announced a message endpoint on another origin: ${backendEndpoint.origin}`,
      );
    }
    const param = SESSION_PARAMS.find((p) => backendEndpoint.searchParams.has(p)) ?? 'sessionId';
    const id = randomUUID();
    const now = Date.now();
    const record: SessionRecord = {
      id,
      createdAt: now,
      lastAccess: now,
      metadata: { transport: 'sse', endpoint: backendEndpoint.href },
      ...ownerFields(request.identity),
    };
    const backendSessionId = backendEndpoint.searchParams.get(param);
    if (backendSessionId !== null) record.backendSessionId = backendSessionId;
    await withStore(this.#fc, (store) => store.create(record));
    const clientUrl = new URL(this.#endpointBase(request) + backendEndpoint.pathname);
    clientUrl.search = backendEndpoint.search;
    clientUrl.searchParams.set(param, id);
    return { id, clientUrl: clientUrl.href, endpoint: backendEndpoint.href };
  }

  async #postMessage(request: EdgeRequest): Promise<void> {
    const fc = this.#fc;
    const query = new URL(request.req.url ?? '/', 'http://proxy').searchParams;
    const clientSessionId = SESSION_PARAMS.map((p) => query.get(p)).find((v) => v !== null);
    if (clientSessionId === undefined || clientSessionId === null) {
      throw reject(400, RPC.invalidRequest, 'Missing sessionId query parameter (open the SSE stream first)');
    }
    const session = await loadSession(fc, clientSessionId, request.identity);
    const endpoint = session?.metadata.endpoint;
    if (!session || session.metadata.transport !== 'sse' || endpoint === undefined) throw sessionNotFound();

    let body = await request.readBody();
    // Every POST is checked as one JSON-RPC message, policies or not.
    const received = await readMessage(request);
    let message: JsonRpcMessage = received;
    if (fc.options.policies.length > 0) {
      const ctx = messageContext(fc, request, session.id);
      let approved: { message: JsonRpcMessage; rewritten: boolean };
      try {
        approved = await applyClientPolicies(fc.options.policies, received, ctx, request);
      } catch (err) {
        if (!(err instanceof ProxyRejection)) throw err;
        return this.#refuse(request, session.id, received, err);
      }
      if (approved.rewritten) body = Buffer.from(JSON.stringify(approved.message));
      if (fc.inspectsResponses && isRequest(approved.message)) fc.pending.add(session.id, approved.message);
      message = approved.message;
    }

    const headers = this.#forwardHeaders(request);
    if (fc.options.tracePropagation) {
      const traced = fc.options.tracePropagation.outgoing(request.annotations, request.req.headers, message);
      Object.assign(headers, traced.headers);
      if (traced.message) body = Buffer.from(JSON.stringify(traced.message));
    }
    const id = isRequest(received) ? received.id : null;
    await withDeadline(fc.options.upstreamTimeoutMs, abortOnClientClose(request), id, async ({ signal }) => {
      const upstream = await fc.client.send({
        url: endpoint,
        method: 'POST',
        headers,
        body,
        identity: request.identity,
        signal,
      });
      if (upstream.statusCode === 404) await endSession(fc, session.id);
      await relayAnswer(upstream, request.res, id, undefined);
    });
  }

  /**
   * A refused message: legacy clients read answers only from the stream, so when this process
   * holds it the JSON-RPC error goes there (and the POST gets 202); otherwise an HTTP 4xx.
   */
  #refuse(request: EdgeRequest, sessionId: string, message: JsonRpcMessage, refusal: ProxyRejection): void {
    const id = isRequest(message) ? message.id : null;
    const stream = this.#streams.get(sessionId);
    if (stream && !stream.closed && id !== null) {
      void stream.write(formatEvent('message', rpcErrorBody(refusal.rpcError, id)));
      request.res.writeHead(202, { 'content-type': 'text/plain' });
      request.res.end('Accepted');
      return;
    }
    writeRejection(
      request.res,
      new ProxyRejection(Math.max(refusal.httpStatus, 400), refusal.rpcError, { id }),
    );
  }
}
