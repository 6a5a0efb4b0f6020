/**
 * The legacy HTTP+SSE client side (MCP 2024-11-05; `proxy_mode: sse`, deprecated):
 * `GET /sse` opens a session's stream and announces `event: endpoint` with the URL to POST to;
 * `POST /messages?session_id=…` takes one message and answers 202. Every response and server
 * message goes to that session's stream only (never broadcast to other clients).
 */
import { ProxyRejection, reject } from '../../pipeline/errors.js';
import { readMessage } from '../../pipeline/message.js';
import { type EdgeRequest } from '../../types.js';
import type { ClientSessions } from './sessions.js';
import { RpcFailure, type MuxSession } from '../session.js';
import { SseWriter, startEventStream } from '../../pipeline/sse.js';
import { isRequest, RPC, type JsonRpcMessage, type JsonRpcResponse } from '../../../mcp/jsonrpc.js';
import { runServerPolicies } from '../../../mcp/policy.js';
import type { RequestSink } from '../../pipeline/answer-sink.js';

/** `<prefix>/messages`, with the prefix normalised to one leading and no trailing slash. */
export function messagesPath(endpointPrefix: string | undefined): string {
  const prefix = (endpointPrefix ?? '').replace(/\/+$/, '');
  return `${prefix === '' || prefix.startsWith('/') ? prefix : `/${prefix}`}/messages`;
}

class StreamSink implements RequestSink {
  constructor(private readonly session: MuxSession) {}
  related(message: JsonRpcMessage): boolean {
    return this.session.channel?.send(message) ?? false;
  }
  respond(response: JsonRpcResponse): void {
    this.session.channel?.send(response);
  }
}

export class SseTransportEndpoint {
  constructor(
    private readonly core: ClientSessions,
    private readonly endpointPrefix: string | undefined,
  ) {}

  async openStream(request: EdgeRequest): Promise<void> {
    if (request.req.method !== 'GET') {
      throw reject(405, RPC.invalidRequest, 'Method not allowed: GET /sse opens the event stream', {
        headers: { allow: 'GET' },
      });
    }
    const session = await this.core.createLegacySession(request.identity);
    request.annotations.sessionId = session.id;
    // --endpoint-prefix wins over a (trusted) X-Forwarded-Prefix, which is part of the base URL.
    const base = this.endpointPrefix ? new URL(request.externalBaseUrl).origin : request.externalBaseUrl;
    const endpoint = `${base}${messagesPath(this.endpointPrefix)}?session_id=${session.id}`;
    await new Promise<void>((resolve) => {
      startEventStream(request.res);
      const stream = new SseWriter(request.res, {
        keepAliveMs: this.core.o.keepAliveMs,
        onClose: () => {
          this.core.end(session, 'the client closed its event stream');
          resolve();
        },
      });
      session.channel = { send: (m) => stream.message(m), close: () => stream.end() };
      stream.event('endpoint', endpoint);
    });
  }

  async postMessage(request: EdgeRequest): Promise<void> {
    if (request.req.method !== 'POST') {
      throw reject(405, RPC.invalidRequest, 'Method not allowed: POST messages here', {
        headers: { allow: 'POST' },
      });
    }
    const sessionId =
      new URL(request.req.url ?? '/', 'http://localhost').searchParams.get('session_id') ?? undefined;
    const message = await readMessage(request);
    const rpcId = 'id' in message ? message.id : null;
    const session = await this.core.resolve(request.identity, sessionId, 'sse', rpcId);
    const ctx = this.core.context(request, 'sse', session);
    let approved: JsonRpcMessage;
    try {
      approved = await this.core.applyPolicies(request, message, ctx);
    } catch (err) {
      // A refusal meant as a JSON-RPC answer (HTTP 2xx) must reach the stream: legacy clients
      // read answers only there.
      if (!(err instanceof ProxyRejection) || err.httpStatus >= 400 || !isRequest(message)) throw err;
      accepted(request);
      session.channel?.send({ jsonrpc: '2.0', id: message.id, error: err.rpcError });
      return;
    }
    const sink = new StreamSink(session);
    if (!isRequest(approved)) {
      await this.core.dispatch(session, approved, sink, ctx);
      accepted(request);
      return;
    }
    accepted(request);
    if (approved.method === 'initialize') {
      let response: JsonRpcResponse;
      try {
        response = { jsonrpc: '2.0', id: approved.id, result: await this.core.mux.initialize(approved) };
        const capabilities = approved.params?.capabilities;
        session.capabilities =
          typeof capabilities === 'object' && capabilities !== null
            ? (capabilities as Record<string, unknown>)
            : {};
        const clientInfo = approved.params?.clientInfo;
        if (typeof clientInfo === 'object' && clientInfo !== null) {
          session.clientInfo = clientInfo as Record<string, unknown>;
        }
      } catch (err) {
        if (!(err instanceof RpcFailure)) throw err;
        response = { jsonrpc: '2.0', id: approved.id, error: err.error };
      }
      if (this.core.o.policies.length > 0) {
        response = await runServerPolicies(this.core.o.policies, response, approved, ctx);
      }
      session.channel?.send(response);
      return;
    }
    await this.core.dispatch(session, approved, sink, ctx);
  }
}

function accepted(request: EdgeRequest): void {
  request.res.writeHead(202, { 'content-type': 'text/plain' }).end('Accepted');
}
