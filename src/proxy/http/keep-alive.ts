/**
 * How long the upstream pool keeps an idle connection: always shorter than the backend does, so
 * a request never goes out on a connection the backend is closing (which fails it with
 * ECONNRESET; a JSON-RPC POST is not idempotent, so it cannot be retried).
 *
 * - A backend that announces `Keep-Alive: timeout=N` gets N seconds less KEEP_ALIVE_MARGIN_MS
 *   (undici applies it per answer; N ≤ 2 means no reuse).
 * - Without the header (Node omits it whenever the answer sets `Connection` itself, as the MCP
 *   SDK's SSE answers do; uvicorn never sends it): as if Node's default of 5 s were announced.
 * - A backend that closes an idle connection sooner teaches the pool its real timeout: the pool
 *   keeps idle connections below what it saw, from then on.
 *
 * undici has no public setter for a client's idle timeout, so the learned one goes through its
 * internal symbols (checked when the module loads: an undici that renamed them fails loudly).
 */
import type { Socket } from 'node:net';
import type { Client } from 'undici';
import {
  undiciBuildConnector as buildConnector,
  UndiciClient as ClientClass,
  undiciSymbols,
} from '../../util/undici-parts.js';

const { kKeepAliveDefaultTimeout, kKeepAliveMaxTimeout } = undiciSymbols as {
  kKeepAliveDefaultTimeout: symbol;
  kKeepAliveMaxTimeout: symbol;
};

/** How much sooner than the backend the pool closes an idle connection (timers run late under load). */
export const KEEP_ALIVE_MARGIN_MS = 2000;
/** Node's http server default, assumed when the backend announces nothing. */
const ASSUMED_BACKEND_IDLE_MS = 5000;
/** The idle limit while the backend announces nothing and has not closed a connection early. */
const UNANNOUNCED_LIMIT_MS = idleLimitBelow(ASSUMED_BACKEND_IDLE_MS);
/** A close this soon after the last bytes ends an answer (`Connection: close`), not an idle wait. */
const MIN_LEARNED_IDLE_MS = 50;

/** The idle limit for a backend that closes connections idle for `backendIdleMs`. */
export function idleLimitBelow(backendIdleMs: number): number {
  return Math.floor(backendIdleMs - Math.min(KEEP_ALIVE_MARGIN_MS, backendIdleMs / 2));
}

type TunedClient = Client & Record<symbol, unknown>;

/**
 * The pool options that keep its idle connections below the backend's timeout: a client factory
 * and a connector that watches for the backend closing idle connections.
 */
export function keepAliveOptions(): Pick<Client.Options, 'connect'> & {
  factory: (origin: URL, options: object) => Client;
} {
  /** Below what the backend was seen to do, once it closed an idle connection early. */
  let learnedLimitMs: number | undefined;
  const clients = new Set<TunedClient>();
  const connect = buildConnector({});

  const learn = (backendIdleMs: number) => {
    const limit = idleLimitBelow(backendIdleMs);
    if (learnedLimitMs !== undefined && limit >= learnedLimitMs) return;
    learnedLimitMs = limit;
    for (const client of clients) {
      if (client.destroyed || client.closed) clients.delete(client);
      else capIdle(client, limit);
    }
  };

  return {
    connect: (options, callback) =>
      connect(options, (...result) => {
        if (result[1]) watchIdleClose(result[1], learn);
        callback(...result);
      }),
    factory: (origin, options) => {
      const client = new ClientClass(origin, {
        ...options,
        keepAliveTimeout: UNANNOUNCED_LIMIT_MS,
        keepAliveTimeoutThreshold: KEEP_ALIVE_MARGIN_MS,
      }) as TunedClient;
      if (learnedLimitMs !== undefined) capIdle(client, learnedLimitMs);
      clients.add(client);
      return client;
    },
  };
}

/** Caps the client's idle timeout, announced or not, at `limitMs`. */
function capIdle(client: TunedClient, limitMs: number): void {
  // undici takes 0 as "unset"; 1 ms closes the connection as soon as it is idle.
  const limit = Math.max(1, limitMs);
  client[kKeepAliveDefaultTimeout] = Math.min(limit, UNANNOUNCED_LIMIT_MS);
  client[kKeepAliveMaxTimeout] = limit;
}

/**
 * Reports how long a connection had been silent when the backend closed it. The listener runs
 * before undici's (it is added first), so bytes that arrived are still buffered.
 */
function watchIdleClose(socket: Socket, learn: (idleMs: number) => void): void {
  let lastBytesAt = performance.now();
  socket.on('readable', () => {
    if (socket.readableLength > 0) lastBytesAt = performance.now();
  });
  socket.once('end', () => {
    const silentMs = performance.now() - lastBytesAt;
    if (silentMs >= MIN_LEARNED_IDLE_MS) learn(silentMs);
  });
}

/** undici's internals this module relies on, checked once: a renamed one fails here, not silently. */
function checkInternals(): void {
  const probe = new ClientClass('http://127.0.0.1:9') as TunedClient;
  const known =
    typeof probe[kKeepAliveDefaultTimeout] === 'number' && typeof probe[kKeepAliveMaxTimeout] === 'number';
  void probe.destroy();
  if (!known) throw new Error('undici changed its keep-alive internals (see keep-alive.ts)');
}
checkInternals();
