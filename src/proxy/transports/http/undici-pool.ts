/**
 * undici's connection pool and request API, loaded from their own modules. The package entry
 * also loads fetch, WebSocket, caches and more (about 12 MB resident, which the proxy would
 * carry for nothing); these two modules cost about 1.5 MB. undici rather than node:http's client
 * because it forwards 10–20% more requests per second through the proxy (bench/).
 */
import { createRequire } from 'node:module';
import type { Dispatcher, Pool } from 'undici';

const require = createRequire(import.meta.url);
const PoolClass = require('undici/lib/dispatcher/pool.js') as typeof Pool;
const requestApi = require('undici/lib/api/api-request.js') as (
  this: Dispatcher,
  options: Dispatcher.RequestOptions,
) => Promise<Dispatcher.ResponseData>;

export type UpstreamPool = Pool;
export type UpstreamData = Dispatcher.ResponseData;

export function createPool(origin: string): UpstreamPool {
  return new PoolClass(origin, {
    connections: 256,
    // Streams (SSE, GET) may stay open and silent for hours; the edge owns the client-facing timeouts.
    headersTimeout: 0,
    bodyTimeout: 0,
    keepAliveTimeout: 60_000,
  });
}

export function poolRequest(pool: UpstreamPool, options: Dispatcher.RequestOptions): Promise<UpstreamData> {
  return requestApi.call(pool, options);
}
