/**
 * One 2026-07-28 request to the backend and its answer, read as JSON or from its SSE stream:
 * notifications on the stream go to `onNotification` as they arrive; the answer to the request
 * ends the exchange. Bounded by `signal` (the upstream timeout and the client going away).
 */
import type { Readable } from 'node:stream';
import type { Identity } from '../../../mcp/identity.js';
import {
  isNotification,
  isResponse,
  RPC,
  toJsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../../mcp/jsonrpc.js';
import { errorMessage } from '../../../util/errors.js';
import { ProxyRejection } from '../../pipeline/errors.js';
import { SseParser } from '../../../mcp/sse.js';
import { discard, headerValue, wholeBody, type UpstreamClient } from '../upstream-client.js';
import { standardHeaders } from '../../eras/up/wire.js';

export interface BackendCall {
  client: UpstreamClient;
  url: string;
  identity: Identity;
  /** The client's headers as the forwarder passes them on (the standard ones replace theirs). */
  clientHeaders: Record<string, string>;
  /** Headers beyond the standard ones (e.g. `Mcp-Param-*`). */
  headers?: Record<string, string>;
  signal: AbortSignal;
  onNotification?: (notification: JsonRpcNotification) => void;
}

/** The backend answered, but not with a JSON-RPC answer to the request (502 for the client). */
export class BrokenAnswer extends ProxyRejection {
  constructor(why: string) {
    super(502, { code: RPC.serverError, message: `The MCP backend sent a broken answer: ${why}` });
  }
}

function broken(why: string): Error {
  return new BrokenAnswer(why);
}

function parse(text: string): ReturnType<typeof toJsonRpcMessage> {
  try {
    return toJsonRpcMessage(JSON.parse(text));
  } catch (err) {
    throw broken(errorMessage(err));
  }
}

/** Sends `request` and resolves with the backend's answer to it (an error answer included). */
export async function callBackend(request: JsonRpcRequest, call: BackendCall): Promise<JsonRpcResponse> {
  const upstream = await call.client.send({
    url: call.url,
    method: 'POST',
    headers: { ...call.clientHeaders, ...standardHeaders(request), ...call.headers },
    body: Buffer.from(JSON.stringify(request)),
    identity: call.identity,
    signal: call.signal,
  });
  const type = headerValue(upstream.headers, 'content-type') ?? '';
  if (type.startsWith('text/event-stream')) return answerFromStream(upstream.body, request, call);
  const body = await wholeBody(upstream).catch((err: unknown) => {
    throw broken(errorMessage(err));
  });
  if (!type.startsWith('application/json') || body.length === 0) {
    throw broken(`HTTP ${upstream.statusCode} without a JSON-RPC answer`);
  }
  const message = parse(body.toString('utf8'));
  if (!isResponse(message)) throw broken('not a JSON-RPC response');
  return { ...message, id: request.id };
}

function answerFromStream(
  body: Readable,
  request: JsonRpcRequest,
  call: BackendCall,
): Promise<JsonRpcResponse> {
  return new Promise((resolve, rejectCall) => {
    const parser = new SseParser();
    let settled = false;
    const finish = (outcome: JsonRpcResponse | Error): void => {
      if (settled) return;
      settled = true;
      discard(body);
      if (outcome instanceof Error) rejectCall(outcome);
      else resolve(outcome);
    };
    body.on('data', (chunk: Buffer) => {
      try {
        for (const event of parser.push(chunk)) {
          if (event.data === undefined || event.data.trim() === '') continue;
          const message = parse(event.data);
          if (isResponse(message) && message.id === request.id) return finish(message);
          if (isNotification(message)) call.onNotification?.(message);
        }
      } catch (err) {
        finish(err instanceof Error ? err : new Error(String(err)));
      }
    });
    body.on('error', (err) =>
      finish(call.signal.aborted ? (call.signal.reason as Error) : broken(err.message)),
    );
    body.once('close', () => finish(broken('the stream ended before the answer')));
  });
}
