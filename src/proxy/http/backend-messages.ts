/** The JSON-RPC messages of a backend answer, for the era bridge (which reads every one of them). */
import { reject } from '../pipeline/errors.js';
import { SseParser } from '../../mcp/sse.js';
import { answerBody } from './relay.js';
import { headerValue, type UpstreamResponse } from './upstream-client.js';
import {
  isResponse,
  RPC,
  tryParseJsonRpc,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcResponse,
} from '../../mcp/jsonrpc.js';
import {
  inspectsServerMessages,
  screenServerMessage,
  type MessageContext,
  type MessagePolicy,
} from '../../mcp/policy.js';

/** The JSON-RPC messages of a backend answer: one JSON message, or each event of an SSE stream. */
export async function* messagesOf(
  upstream: UpstreamResponse,
  id: JsonRpcId | null,
): AsyncGenerator<JsonRpcMessage> {
  const type = headerValue(upstream.headers, 'content-type') ?? '';
  if (type.startsWith('text/event-stream')) {
    const parser = new SseParser();
    for await (const chunk of upstream.body as AsyncIterable<Buffer>) {
      for (const event of parser.push(chunk)) {
        const message = event.data === undefined ? undefined : tryParseJsonRpc(event.data);
        if (message) yield message;
      }
    }
    return;
  }
  const body = await answerBody(upstream, id, undefined);
  const message = body.length === 0 ? undefined : tryParseJsonRpc(body.toString('utf8'));
  if (message) yield message;
  else if (upstream.statusCode >= 300) {
    throw reject(502, RPC.serverError, `The MCP backend answered HTTP ${upstream.statusCode}`, { id });
  }
}

/**
 * The messages, the server's own (its requests, its notifications) through the policies that
 * screen them: a refused one is left out, a refused request answered through `answerServer`.
 */
export async function* screenedMessages(
  messages: AsyncIterable<JsonRpcMessage>,
  policies: readonly MessagePolicy[],
  ctx: MessageContext,
  answerServer: (answer: JsonRpcResponse) => void,
): AsyncGenerator<JsonRpcMessage> {
  const screens = inspectsServerMessages(policies);
  for await (const message of messages) {
    if (!screens || isResponse(message)) yield message;
    else {
      const passed = screenServerMessage(policies, message, ctx, answerServer);
      if (passed) yield passed;
    }
  }
}
