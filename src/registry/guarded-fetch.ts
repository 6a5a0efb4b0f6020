/**
 * The one HTTP GET the registry makes, for a registry file served over HTTP and for the registry
 * API alike, with the SSRF rules of Moat's other outbound requests: https, or plain http only on
 * loopback; private, loopback and link-local addresses are refused (after DNS resolution, at
 * connect time) unless the registry was set with --allow-private-ip; no redirects; a time limit
 * and a size limit.
 */
import { isIP } from 'node:net';
import { publicOnlyLookup } from '../auth/inbound/idp-http.js';
import { isPrivateAddress } from '../auth/inbound/private-address.js';
import { isMoatError, MoatError, runtimeError, usageError } from '../util/errors.js';
import { isLoopbackHost } from '../util/net.js';

export const MAX_REGISTRY_BYTES = 8 * 1024 * 1024;
export const REGISTRY_TIMEOUT_MS = 10_000;

/** No answer at all (network failure or the time limit): a cached copy may serve instead. */
export class RegistryUnreachableError extends MoatError {
  constructor(message: string) {
    super('runtime', message);
  }
}

export interface GuardedGetOptions {
  allowPrivateIp: boolean;
  headers?: Record<string, string>;
  timeoutMs?: number;
  maxBytes?: number;
}

export interface GuardedResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** Checks a registry URL against the scheme rules; the address rules apply when connecting. */
export function checkRegistryUrl(location: string, allowPrivateIp: boolean): URL {
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    throw usageError(`registry URL ${JSON.stringify(location)} is not a valid URL`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (url.protocol === 'http:' && !isLoopbackHost(host)) {
    throw usageError(`registry URL ${location} must use https (plain http only on loopback)`);
  }
  // A literal address never goes through DNS, so the connect-time check would not see it.
  const literalPrivate = isLoopbackHost(host) || (isIP(host) !== 0 && isPrivateAddress(host));
  if (literalPrivate && !allowPrivateIp) {
    throw usageError(
      `registry URL ${location} points at a private address; allow it with moat config set-registry ${location} --allow-private-ip`,
    );
  }
  return url;
}

/**
 * GETs `url` and reads the whole answer (any status: the caller decides). A network failure,
 * the time limit or the size limit is a runtime error naming `url`.
 */
export async function guardedGet(url: string, options: GuardedGetOptions): Promise<GuardedResponse> {
  const checked = checkRegistryUrl(url, options.allowPrivateIp);
  const timeoutMs = options.timeoutMs ?? REGISTRY_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? MAX_REGISTRY_BYTES;
  // Loaded here: only a registry set by URL is fetched, and `moat run` starts faster without it.
  const { Agent, fetch } = await import('undici');
  const agent = new Agent({
    connect: options.allowPrivateIp
      ? {}
      : { lookup: publicOnlyLookup('refused for a registry set without --allow-private-ip') },
  });
  try {
    const response = await fetch(checked, {
      headers: { accept: 'application/json', ...options.headers },
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
      dispatcher: agent,
    });
    const text = await readLimited(response.body, url, maxBytes);
    return { status: response.status, headers: response.headers as unknown as Headers, text };
  } catch (err) {
    if (isMoatError(err)) throw err;
    throw new RegistryUnreachableError(
      `registry ${url} unreachable: ${describeFetchFailure(err, timeoutMs)}`,
    );
  } finally {
    await agent.close();
  }
}

async function readLimited(
  body: ReadableStream<Uint8Array> | null,
  location: string,
  maxBytes: number,
): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body?.getReader();
  for (let next = await reader?.read(); next && !next.done; next = await reader?.read()) {
    size += next.value.byteLength;
    if (size > maxBytes) {
      await reader?.cancel();
      throw runtimeError(`registry ${location} is larger than ${maxBytes} bytes`);
    }
    chunks.push(next.value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describeFetchFailure(err: unknown, timeoutMs: number): string {
  if (!(err instanceof Error)) return String(err);
  if (err.name === 'TimeoutError') return `no answer within ${timeoutMs / 1000} s`;
  const cause = err.cause instanceof Error ? err.cause : undefined;
  return cause?.message ?? err.message;
}
