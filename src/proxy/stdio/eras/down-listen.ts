/**
 * `subscriptions/listen` for a 2026-07-28 client of a 2025 stdio server: the listen stream is a
 * multiplexer session whose channel is the SSE response. list_changed notifications already reach
 * every session's channel; each subscribed URI is `resources/subscribe`d through the multiplexer
 * (reference-counted per URI, unsubscribed when the stream's session ends).
 */
import type { EdgeRequest } from '../../types.js';
import { SseWriter, startEventStream } from '../../pipeline/sse.js';
import { type Multiplexer } from '../mux.js';
import { type MuxSession } from '../session.js';
import {
  acknowledgement,
  filterAccepts,
  honoredFilter,
  isEmptyFilter,
  listenClosed,
  stamped,
} from '../../eras/down/listen.js';
import { isNotification, type JsonRpcRequest } from '../../../mcp/jsonrpc.js';
import type { MessageContext } from '../../../mcp/policy.js';

const quietSink = { related: () => false, respond: () => {} };

/** Serves one listen stream until the client closes it. */
export async function serveStdioListen(
  mux: Multiplexer,
  session: MuxSession,
  request: EdgeRequest,
  listen: JsonRpcRequest,
  ctx: MessageContext,
  keepAliveMs: number,
): Promise<void> {
  await mux.ensureInitialized();
  const serverInit = mux.serverInit ?? {};
  const filter = honoredFilter(listen, serverInit.capabilities);
  const { res } = request;
  if ('jsonrpc' in filter) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(filter));
    return;
  }
  startEventStream(res);
  await new Promise<void>((resolve) => {
    const stream = new SseWriter(res, { keepAliveMs, onClose: resolve });
    stream.message(acknowledgement(filter, listen));
    if (isEmptyFilter(filter)) {
      stream.message(listenClosed(listen, serverInit.serverInfo));
      stream.end();
      resolve();
      return;
    }
    session.channel = {
      send: (message) => {
        if (isNotification(message) && filterAccepts(filter, message))
          stream.message(stamped(message, listen));
        return true;
      },
      close: () => {
        stream.message(listenClosed(listen, serverInit.serverInfo));
        stream.end();
      },
    };
    for (const [i, uri] of (filter.resourceSubscriptions ?? []).entries()) {
      const subscribe = {
        jsonrpc: '2.0' as const,
        id: `moat-listen-${i}`,
        method: 'resources/subscribe',
        params: { uri },
      };
      mux.forwardRequest(session, subscribe, quietSink, ctx);
    }
  });
}
