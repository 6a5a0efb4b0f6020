/**
 * Where the user's registry comes from (`moat config set-registry`), kept in config.yaml under
 * `registry`, and loading a registry document: a JSON file, or a JSON document over HTTP(S)
 * (fetched with the rules of guarded-fetch.ts). An MCP Registry API is read by api-client.ts.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { writeFileAtomic } from '../util/atomic-file.js';
import { errorMessage, isMoatError, runtimeError, usageError } from '../util/errors.js';
import { moatDirs } from '../util/paths.js';
import { guardedGet, MAX_REGISTRY_BYTES } from './guarded-fetch.js';
import { parseRegistryDocument, type RegistryServer } from './schema.js';

export interface RegistrySource {
  /** An absolute file path, or an http(s) URL (of a registry document, or an API's base URL). */
  location: string;
  allowPrivateIp: boolean;
  /** `api`: an MCP Registry API base URL; otherwise a registry document (file or URL). */
  kind?: 'api';
}

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
    registry?: { source?: unknown; allow_private_ip?: unknown; kind?: unknown };
  } | null;
  const source = value?.registry?.source;
  if (source === undefined) return undefined;
  if (typeof source !== 'string' || source === '') {
    throw usageError(`registry.source in ${configPath(env)} must be a file path or an http(s) URL`);
  }
  return {
    location: source,
    allowPrivateIp: value?.registry?.allow_private_ip === true,
    ...(value?.registry?.kind === 'api' ? { kind: 'api' as const } : {}),
  };
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
        ...(source.kind ? { kind: source.kind } : {}),
      }),
    );
  }
  await writeFileAtomic(configPath(env), doc.toString());
}

export function isUrl(location: string): boolean {
  return /^https?:\/\//i.test(location);
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
  const response = await guardedGet(source.location, { allowPrivateIp: source.allowPrivateIp });
  if (response.status !== 200) {
    throw runtimeError(`registry ${source.location} answered HTTP ${response.status}`);
  }
  return response.text;
}
