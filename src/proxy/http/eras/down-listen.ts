/**
 * `subscriptions/listen` for 2026-07-28 clients of a 2025 streamable-HTTP server. A listen stream
 * belongs to its principal's backend session: Moat subscribes the session to the filter's URIs
 * (`resources/subscribe`, counted per URI in this process), opens the session's GET stream (one
 * per session in this process), and hands every list_changed / resources/updated the session
 * receives — on that stream or on a bridged request's stream — to the session's listen streams
 * whose filter asks for it, stamped with their subscriptionId. The same GET stream is open while
 * bridged calls run on the session: servers built on the v2 SDK send a call's sampling,
 * elicitation and roots requests there rather than on the call's own stream, and such a request
 * goes to the newest call running on the session.
 */
import type { Logger } from 'pino';
import type { EdgeRequest } from '../../types.js';
import { SseWriter, startEventStream } from '../../pipeline/sse.js';
import type { BackendSession } from '../../eras/down/backend-sessions.js';
import {
  acknowledgement,
  filterAccepts,
  honoredFilter,
  isEmptyFilter,
  listenClosed,
  stamped,
  type ListenFilter,
} from '../../eras/down/listen.js';
import { messagesOf } from '../backend-messages.js';
import { discard, type UpstreamResponse } from '../upstream-client.js';
import { errorMessage } from '../../../util/errors.js';
import {
  isNotification,
  isRequest,
  type JsonRpcNotification,
  type JsonRpcRequest,
} from '../../../mcp/jsonrpc.js';

/** What the hub needs from the bridge: requests on the principal's backend session and its GET stream. */
export interface ListenBackend {
  /** Names the principal and its backend session (listeners of one key share notifications). */
  key: string;
  send(message: JsonRpcRequest): Promise<void>;
  stream(signal: AbortSignal): Promise<UpstreamResponse>;
  /** Keeps the backend session from expiring in the store while a stream listens on it. */
  touch(): void;
}

type Listener = (notification: JsonRpcNotification) => void;
/** A bridged call running on the session, taking a server request that came on the GET stream. */
type CallHolder = (request: JsonRpcRequest) => void;

interface SessionListeners {
  listeners: Set<Listener>;
  calls: CallHolder[];
  uris: Map<string, number>;
  stream: AbortController;
  /** Settles once the backend answered the GET (open, or refused); `answered` then. */
  opened: Promise<void>;
  answered: boolean;
  /** Ends an idle stream a while after its last call (calls come in runs). */
  linger?: NodeJS.Timeout;
}

/** How long the GET stream stays open after the session's last call and listen ended. */
const LINGER_MS = 30_000;
/** How long a call waits for the GET stream to open before it is sent anyway. */
const OPEN_WAIT_MS = 5_000;

const CHANGE_NOTIFICATIONS = new Set([
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/resources/list_changed',
  'notifications/resources/updated',
]);

export class HttpListenHub {
  readonly #sessions = new Map<string, SessionListeners>();
  #nextId = 1;

  constructor(
    private readonly logger: Logger,
    private readonly keepAliveMs: number,
  ) {}

  /** A notification the backend session `key` received: to the listen streams that want it. */
  publish(key: string, notification: JsonRpcNotification): void {
    if (!CHANGE_NOTIFICATIONS.has(notification.method)) return;
    for (const listener of this.#sessions.get(key)?.listeners ?? []) listener(notification);
  }

  /** Serves one listen stream on the principal's backend session until the client closes it. */
  async serve(
    request: EdgeRequest,
    listen: JsonRpcRequest,
    session: BackendSession,
    backend: ListenBackend,
  ): Promise<void> {
    const filter = honoredFilter(listen, session.init.capabilities);
    const { res } = request;
    if ('jsonrpc' in filter) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(filter));
      return;
    }
    startEventStream(res);
    const closed = new Promise<void>((resolve) => {
      const out = new SseWriter(res, {
        keepAliveMs: this.keepAliveMs,
        onKeepAlive: () => backend.touch(),
        onClose: resolve,
      });
      out.message(acknowledgement(filter, listen));
      if (isEmptyFilter(filter)) {
        out.message(listenClosed(listen, session.init.serverInfo));
        out.end();
        resolve();
        return;
      }
      const listener: Listener = (notification) => {
        if (filterAccepts(filter, notification)) out.message(stamped(notification, listen));
      };
      this.#add(listener, filter, backend);
      res.once('close', () => this.#remove(listener, filter, backend));
    });
    await closed;
  }

  /**
   * A bridged call starts on the session: its GET stream is opened (and waited for, so nothing the
   * server sends there is missed) and kept open until the call is released.
   */
  async hold(backend: ListenBackend, onRequest: CallHolder): Promise<() => void> {
    const entry = this.#entry(backend);
    entry.calls.push(onRequest);
    if (!entry.answered) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        entry.opened,
        new Promise((resolve) => (timer = setTimeout(resolve, OPEN_WAIT_MS))),
      ]);
      clearTimeout(timer);
    }
    return () => {
      const at = entry.calls.indexOf(onRequest);
      if (at !== -1) entry.calls.splice(at, 1);
      this.#endIfIdle(backend.key, entry);
    };
  }

  #entry(backend: ListenBackend): SessionListeners {
    let entry = this.#sessions.get(backend.key);
    if (!entry) {
      let resolve = () => {};
      const created: SessionListeners = {
        listeners: new Set(),
        calls: [],
        uris: new Map(),
        stream: new AbortController(),
        opened: new Promise<void>((r) => (resolve = r)),
        answered: false,
      };
      this.#sessions.set(backend.key, created);
      void this.#relayStream(created, backend, () => {
        created.answered = true;
        resolve();
      });
      entry = created;
    }
    clearTimeout(entry.linger);
    return entry;
  }

  /** No listen and no call on the session: its stream ends after LINGER_MS unless one comes. */
  #endIfIdle(key: string, entry: SessionListeners): void {
    if (entry.listeners.size > 0 || entry.calls.length > 0) return;
    clearTimeout(entry.linger);
    entry.linger = setTimeout(() => {
      if (this.#sessions.get(key) !== entry || entry.listeners.size > 0 || entry.calls.length > 0) return;
      this.#sessions.delete(key);
      entry.stream.abort();
    }, LINGER_MS);
    entry.linger.unref();
  }

  #add(listener: Listener, filter: ListenFilter, backend: ListenBackend): void {
    const entry = this.#entry(backend);
    entry.listeners.add(listener);
    for (const uri of filter.resourceSubscriptions ?? []) {
      const count = entry.uris.get(uri) ?? 0;
      entry.uris.set(uri, count + 1);
      if (count === 0) void this.#sendInBackground(backend, this.#request('resources/subscribe', uri));
    }
  }

  #remove(listener: Listener, filter: ListenFilter, backend: ListenBackend): void {
    const entry = this.#sessions.get(backend.key);
    if (!entry?.listeners.delete(listener)) return;
    for (const uri of filter.resourceSubscriptions ?? []) {
      const count = (entry.uris.get(uri) ?? 1) - 1;
      if (count > 0) {
        entry.uris.set(uri, count);
        continue;
      }
      entry.uris.delete(uri);
      void this.#sendInBackground(backend, this.#request('resources/unsubscribe', uri));
    }
    this.#endIfIdle(backend.key, entry);
  }

  /** (Un)subscribing happens in the background: a failure is logged, never an unhandled rejection. */
  async #sendInBackground(backend: ListenBackend, message: JsonRpcRequest): Promise<void> {
    try {
      await backend.send(message);
    } catch (err) {
      this.logger.warn(
        { err: errorMessage(err), method: message.method },
        'a listen stream could not update its subscription at the MCP backend',
      );
    }
  }

  #request(method: string, uri: string): JsonRpcRequest {
    return { jsonrpc: '2.0', id: `moat-listen-${this.#nextId++}`, method, params: { uri } };
  }

  /** Reads the session's GET stream while it has listeners or calls (a server may refuse it: 405/409). */
  async #relayStream(entry: SessionListeners, backend: ListenBackend, opened: () => void): Promise<void> {
    try {
      const upstream = await backend.stream(entry.stream.signal);
      opened();
      if (upstream.statusCode >= 300) {
        discard(upstream.body);
        this.logger.debug({ status: upstream.statusCode }, 'the MCP backend opened no GET stream for listen');
        return;
      }
      for await (const message of messagesOf(upstream, null)) {
        if (isNotification(message)) this.publish(backend.key, message);
        else if (isRequest(message)) entry.calls.at(-1)?.(message);
      }
    } catch (err) {
      if (!entry.stream.signal.aborted) {
        this.logger.debug({ err: errorMessage(err) }, 'the GET stream of a bridged session ended');
      }
    } finally {
      opened();
    }
  }
}
