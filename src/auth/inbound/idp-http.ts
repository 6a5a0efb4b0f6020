/**
 * HTTP client for the requests Moat makes to an identity provider (OIDC discovery, JWKS,
 * introspection). It enforces the transport rules of the inbound-auth flags:
 * - https only, unless InsecureAllowHTTP (--oidc-insecure-allow-http);
 * - no private, loopback or link-local destinations unless AllowPrivateIP (--jwks-allow-private-ip).
 *   Host names are checked after DNS resolution, at connect time, so a name that resolves to
 *   127.0.0.1 or 169.254.169.254 is refused too (no check-then-connect gap);
 * - the CA bundle (--thv-ca-bundle) is used for TLS;
 * - responses are size-capped and time-limited.
 *
 * undici's Agent and its request API come from their own modules (src/util/undici-parts.ts): the
 * package entry also loads fetch, WebSocket, caches and mocks, about 3 MB resident in every proxy
 * with JWT validation.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { IncomingHttpHeaders } from 'node:http';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import type { Agent } from 'undici';
import { errorMessage } from '../../util/errors.js';
import { UndiciAgent, undiciRequest } from '../../util/undici-parts.js';
import { isPrivateAddress } from './private-address.js';
import { checkIdpUrl } from './settings.js';

export interface IdpHttpOptions {
  allowPrivateIp: boolean;
  allowHttp: boolean;
  /** PEM text of extra CA certificates for TLS to the identity provider. */
  caBundle?: string;
  /** Per-attempt timeout. */
  timeoutMs?: number;
}

/** The identity provider could not be reached or answered unusably; the message is for logs. */
export class IdpUnavailableError extends Error {
  override readonly name = 'IdpUnavailableError';
}

const DEFAULT_TIMEOUT_MS = 5_000;

/** An identity provider's answer; a body not read goes to `discard`. */
export interface IdpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

/** Drops an answer's body unread: undici then aborts the exchange, an error nobody needs to see. */
export function discard(response: IdpResponse): void {
  response.body.on('error', () => undefined).destroy();
}

/**
 * A dns.lookup that refuses private addresses; used by the socket itself, so it cannot be raced.
 * `howToAllow` ends the refusal message (the registry client names its own option).
 */
export function publicOnlyLookup(howToAllow = 'not allowed without --jwks-allow-private-ip'): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const refused = addresses.find((a) => isPrivateAddress(a.address));
      if (refused) {
        return callback(
          Object.assign(
            new Error(`${hostname} resolves to private address ${refused.address} (${howToAllow})`),
            { code: 'EPRIVATEADDRESS' },
          ),
          '',
          0,
        );
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  };
}

export class IdpHttpClient {
  private readonly agent: Agent;
  private readonly timeoutMs: number;

  constructor(private readonly options: IdpHttpOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.agent = new UndiciAgent({
      connect: {
        ...(options.caBundle ? { ca: options.caBundle } : {}),
        ...(options.allowPrivateIp ? {} : { lookup: publicOnlyLookup() }),
      },
    });
  }

  /** Applies the scheme and private-address rules to a URL learned at run time (e.g. jwks_uri). */
  checkUrl(url: string, what: string): void {
    try {
      checkIdpUrl(url, what, this.options);
    } catch (err) {
      throw new IdpUnavailableError(errorMessage(err));
    }
  }

  /** Performs one request; network failures and refusals become IdpUnavailableError. */
  async request(
    url: string,
    what: string,
    init: { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {},
  ): Promise<IdpResponse> {
    this.checkUrl(url, what);
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    const target = new URL(url);
    try {
      // Redirects are not followed (the request API never does): a 3xx is an answer that is not 200.
      const answer = await undiciRequest.call(this.agent, {
        origin: target.origin,
        path: `${target.pathname}${target.search}`,
        method: init.method ?? 'GET',
        headers: init.headers,
        body: init.body,
        signal,
      });
      return { status: answer.statusCode, headers: answer.headers, body: answer.body };
    } catch (err) {
      throw new IdpUnavailableError(`${what} ${url} unreachable: ${describeFetchError(err)}`, { cause: err });
    }
  }

  /** Reads a JSON body of at most maxBytes. */
  async readJson(response: IdpResponse, what: string, maxBytes: number): Promise<unknown> {
    const tooLarge = () => {
      discard(response);
      return new IdpUnavailableError(`${what} response is larger than ${maxBytes} bytes`);
    };
    if (Number(response.headers['content-length'] ?? '0') > maxBytes) throw tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        size += chunk.byteLength;
        if (size > maxBytes) throw tooLarge();
        chunks.push(chunk);
      }
    } catch (err) {
      if (err instanceof IdpUnavailableError) throw err;
      throw new IdpUnavailableError(`${what} response could not be read: ${describeFetchError(err)}`, {
        cause: err,
      });
    }
    try {
      return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    } catch {
      throw new IdpUnavailableError(`${what} response is not JSON`);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

function describeFetchError(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? err.cause : undefined;
    if (err.name === 'TimeoutError' || cause?.name === 'TimeoutError') return 'timed out';
    return cause?.message ?? err.message;
  }
  return String(err);
}
