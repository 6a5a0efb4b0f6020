/**
 * The GET streams of 2025-era sessions served in front of a 2026-only server, held by this
 * process: what a session's `resources/subscribe` and the server's list changes deliver, through
 * one `subscriptions/listen` request to the backend per open stream (reopened when the session's
 * subscriptions change).
 */
import type { ServerResponse } from 'node:http';
import type { JsonRpcMessage, JsonRpcNotification } from '../../../mcp/jsonrpc.js';
import { SseWriter, startEventStream } from '../../pipeline/sse.js';

interface OpenStream {
  writer: SseWriter;
  /** Ends the backend's `subscriptions/listen` behind this stream. */
  listen?: AbortController;
}

/** Runs a `subscriptions/listen` until `signal` aborts, handing over each notification. */
export type Listen = (
  signal: AbortSignal,
  deliver: (notification: JsonRpcNotification) => void,
) => Promise<void>;

/** Notifications of the 2026 revision's own machinery, which a 2025-era client does not know. */
const INTERNAL = new Set(['notifications/subscriptions/acknowledged']);

export class SessionStreams {
  readonly #open = new Map<string, OpenStream>();

  /** Starts the session's GET stream on `res`; a previous one of the session here is ended. */
  open(
    sessionId: string,
    res: ServerResponse,
    options: { keepAliveMs: number; onKeepAlive: () => void; onError: (err: unknown) => void },
    listen: Listen,
  ): void {
    this.close(sessionId);
    startEventStream(res, { 'mcp-session-id': sessionId });
    const stream: OpenStream = {
      writer: new SseWriter(res, {
        keepAliveMs: options.keepAliveMs,
        onKeepAlive: options.onKeepAlive,
        onClose: () => {
          if (this.#open.get(sessionId) === stream) this.close(sessionId);
        },
      }),
    };
    this.#open.set(sessionId, stream);
    this.relisten(sessionId, listen, options.onError);
  }

  /** (Re)opens the backend listen behind the session's stream, when this process holds it. */
  relisten(sessionId: string, listen: Listen, onError: (err: unknown) => void): void {
    const stream = this.#open.get(sessionId);
    if (!stream) return;
    stream.listen?.abort();
    const controller = new AbortController();
    stream.listen = controller;
    listen(controller.signal, (notification) => {
      if (!INTERNAL.has(notification.method)) stream.writer.message(notification);
    }).catch((err: unknown) => {
      if (!controller.signal.aborted) onError(err);
    });
  }

  /** Sends a message on the session's stream; false when this process holds none. */
  send(sessionId: string, message: JsonRpcMessage): boolean {
    return this.#open.get(sessionId)?.writer.message(message) ?? false;
  }

  close(sessionId: string): void {
    const stream = this.#open.get(sessionId);
    if (!stream) return;
    this.#open.delete(sessionId);
    stream.listen?.abort();
    stream.writer.end();
  }

  closeAll(): void {
    for (const id of [...this.#open.keys()]) this.close(id);
  }
}
