/**
 * Where the user's registry comes from (`moat config set-registry`), kept in config.yaml under
 * `registry`, and loading it: a JSON file, or a JSON document over HTTP(S).
 *
 * Fetching follows the SSRF rules of Moat's other outbound requests: https, or plain http only on
 * loopback; private, loopback and link-local addresses are refused (after DNS resolution, at
 * connect time) unless the registry was set with --allow-private-ip; no redirects; a time limit
 * and a size limit.
 */
import { readFile, stat } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { publicOnlyLookup } from '../auth/inbound/idp-http.js';
import { isPrivateAddress } from '../auth/inbound/private-address.js';
import { writeFileAtomic } from '../util/atomic-file.js';
import { errorMessage, isMoatError, runtimeError, usageError } from '../util/errors.js';
import { isLoopbackHost } from '../util/net.js';
import { moatDirs } from '../util/paths.js';
import { parseRegistryDocument, type RegistryServer } from './schema.js';

export interface RegistrySource {
  /** An absolute file path, or an http(s) URL. */
  location: string;
  allowPrivateIp: boolean;
}

export const MAX_REGISTRY_BYTES = 8 * 1024 * 1024;
export const REGISTRY_TIMEOUT_MS = 10_000;

function configPath(env: NodeJS.ProcessEnv): string {
  return join(moatDirs(env).config, 'config.yaml');
}

async function readConfig(env: NodeJS.ProcessEnv): Promise<ReturnType<typeof parseDocument>> {
  const path = configPath(env);
  let text = '';
  try {
    text = await readFile(path, 'utf8');
  } catch {
    // No config.yaml yet: an empty document.
  }
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw usageError(`cannot parse ${path}: ${doc.errors[0]?.message}`);
  return doc;
}

/** The configured user registry, or undefined when none is set. */
export async function configuredRegistry(
  env: NodeJS.ProcessEnv = process.env,
): Promise<RegistrySource | undefined> {
  const value = (await readConfig(env)).toJS() as {
    registry?: { source?: unknown; allow_private_ip?: unknown };
  } | null;
  const source = value?.registry?.source;
  if (source === undefined) return undefined;
  if (typeof source !== 'string' || source === '') {
    throw usageError(`registry.source in ${configPath(env)} must be a file path or an http(s) URL`);
  }
  return { location: source, allowPrivateIp: value?.registry?.allow_private_ip === true };
}

/** Saves (or with undefined, removes) the user registry, keeping the rest of config.yaml. */
export async function saveRegistry(
  source: RegistrySource | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const doc = await readConfig(env);
  if (doc.contents === null) doc.contents = doc.createNode({});
  if (source === undefined) doc.delete('registry');
  else {
    doc.set(
      'registry',
      doc.createNode({
        source: source.location,
        ...(source.allowPrivateIp ? { allow_private_ip: true } : {}),
      }),
    );
  }
  await writeFileAtomic(configPath(env), doc.toString());
}

export function isUrl(location: string): boolean {
  return /^https?:\/\//i.test(location);
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

/** Loads and validates the servers of a registry file or URL. */
export async function loadRegistry(source: RegistrySource): Promise<RegistryServer[]> {
  const text = isUrl(source.location) ? await fetchRegistry(source) : await readRegistryFile(source.location);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw usageError(`registry ${source.location} is not valid JSON (${errorMessage(err)})`);
  }
  return parseRegistryDocument(json, source.location);
}

async function readRegistryFile(path: string): Promise<string> {
  try {
    if ((await stat(path)).size > MAX_REGISTRY_BYTES) {
      throw usageError(`registry ${path} is larger than ${MAX_REGISTRY_BYTES} bytes`);
    }
    return await readFile(path, 'utf8');
  } catch (err) {
    if (isMoatError(err)) throw err;
    throw runtimeError(`cannot read registry ${path}: ${errorMessage(err)}`);
  }
}

async function fetchRegistry(source: RegistrySource): Promise<string> {
  const url = checkRegistryUrl(source.location, source.allowPrivateIp);
  // Loaded here: only a registry set by URL is fetched, and `moat run` starts faster without it.
  const { Agent, fetch } = await import('undici');
  const agent = new Agent({
    connect: source.allowPrivateIp
      ? {}
      : { lookup: publicOnlyLookup('refused for a registry set without --allow-private-ip') },
  });
  try {
    const response = await fetch(url, {
      headers: { accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(REGISTRY_TIMEOUT_MS),
      dispatcher: agent,
    });
    if (!response.ok) {
      await response.body?.cancel();
      throw runtimeError(`registry ${source.location} answered HTTP ${response.status}`);
    }
    return await readLimited(response.body, source.location);
  } catch (err) {
    if (isMoatError(err)) throw err;
    throw runtimeError(`registry ${source.location} unreachable: ${describeFetchFailure(err)}`);
  } finally {
    await agent.close();
  }
}

async function readLimited(body: ReadableStream<Uint8Array> | null, location: string): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body?.getReader();
  for (let next = await reader?.read(); next && !next.done; next = await reader?.read()) {
    size += next.value.byteLength;
    if (size > MAX_REGISTRY_BYTES) {
      await reader?.cancel();
      throw runtimeError(`registry ${location} is larger than ${MAX_REGISTRY_BYTES} bytes`);
    }
    chunks.push(next.value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describeFetchFailure(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (err.name === 'TimeoutError') return `no answer within ${REGISTRY_TIMEOUT_MS / 1000} s`;
  const cause = err.cause instanceof Error ? err.cause : undefined;
  return cause?.message ?? err.message;
}
