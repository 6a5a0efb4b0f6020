/**
 * The parts of undici Moat runs in the proxy, each loaded from its own module inside the package
 * rather than from the package entry: the entry also loads fetch, WebSocket, caches, mocks and
 * more (about 12 MB resident the proxy would carry for nothing). The proxy image keeps only the
 * files these modules reach (scripts/bundle-proxy.ts follows UNDICI_PARTS), so a part used
 * anywhere in the proxy must come from here.
 */
import { createRequire } from 'node:module';
import type { Agent, buildConnector, Client, Dispatcher, Pool } from 'undici';

/** The modules below, as paths inside the undici package. */
export const UNDICI_PARTS = [
  'lib/dispatcher/agent.js',
  'lib/dispatcher/pool.js',
  'lib/dispatcher/client.js',
  'lib/core/connect.js',
  'lib/core/symbols.js',
  'lib/api/api-request.js',
] as const;

type UndiciPart = (typeof UNDICI_PARTS)[number];

const require = createRequire(import.meta.url);
const part = (path: UndiciPart): unknown => require(`undici/${path}`);

export const UndiciAgent = part('lib/dispatcher/agent.js') as typeof Agent;
export const UndiciPool = part('lib/dispatcher/pool.js') as typeof Pool;
export const UndiciClient = part('lib/dispatcher/client.js') as typeof Client;
export const undiciBuildConnector = part('lib/core/connect.js') as typeof buildConnector;
/** undici's internal symbols (src/proxy/http/keep-alive.ts sets a client's idle timeout through them). */
export const undiciSymbols = part('lib/core/symbols.js') as Record<string, symbol>;
/**
 * undici's `request()` without its URL-parsing wrapper: call it with the dispatcher as `this`
 * and `origin` and `path` in the options. It never follows redirects.
 */
export const undiciRequest = part('lib/api/api-request.js') as Dispatcher['request'];
