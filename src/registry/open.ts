/**
 * The registry `moat run <name>`, `moat registry` and `moat search` read: the built-in catalog,
 * overridden entry by entry by the user's registry (`moat config set-registry`), which is a
 * registry document (file or URL, read whole) or an MCP Registry API (asked page by page).
 */
import { resolve } from 'node:path';
import { errorMessage, usageError } from '../util/errors.js';
import { RegistryApiClient, latestUsable, type ListQuery } from './api-client.js';
import type { RegistryEntry } from './api-shape.js';
import { CATALOG, CATALOG_SOURCE } from './catalog.js';
import { findServer, mergeRegistries, searchServers, shortName } from './lookup.js';
import { ResponseCache } from './response-cache.js';
import { parseRegistryDocument, type RegistryServer } from './schema.js';
import { configuredRegistry, isUrl, loadRegistry, type RegistrySource } from './source.js';

export function catalogServers(): RegistryServer[] {
  return parseRegistryDocument(CATALOG, CATALOG_SOURCE);
}

export interface Registry {
  /** Every entry (an API registry: the latest version of each; deleted ones left out). */
  list(options?: { updatedSince?: string }): Promise<RegistryEntry[]>;
  /** Entries matching a term (an API registry matches names, as the API does). */
  search(term: string): Promise<RegistryEntry[]>;
  /**
   * The entry `name` (full or unique short name) means, at `version` or the latest usable one;
   * undefined when no registry has it. A name that has no such version is a usage error.
   */
  find(name: string, version?: string): Promise<RegistryEntry | undefined>;
  /** The servers seen so far, for "did you mean" (an API registry is not listed whole for it). */
  known(): RegistryServer[];
}

export interface OpenOptions {
  env?: NodeJS.ProcessEnv;
  /** A user registry that cannot be read leaves the catalog alone; `warn` says why. */
  tolerateUserFailure?: boolean;
  /** One-line notices and warnings (offline copies, skipped entries, an unreadable registry). */
  warn?: (line: string) => void;
}

const active = (server: RegistryServer): RegistryEntry => ({ server, status: 'active' });

export async function openRegistry(options: OpenOptions = {}): Promise<Registry> {
  const env = options.env ?? process.env;
  const source = await configuredRegistry(env);
  const catalog = catalogServers();
  if (!source) return documentRegistry(catalog);
  let warned = false;
  const fallback = (err: unknown): RegistryServer[] => {
    if (!options.tolerateUserFailure) throw err;
    if (!warned)
      options.warn?.(`your registry was not read (${errorMessage(err)}); using the built-in catalog`);
    warned = true;
    return [];
  };
  if (source.kind !== 'api') {
    const user = await loadRegistry(source).catch(fallback);
    return documentRegistry(mergeRegistries(catalog, user));
  }
  return new ApiRegistry(catalog, apiClient(source, env, options.warn), fallback, options.warn);
}

export function apiClient(
  source: RegistrySource,
  env: NodeJS.ProcessEnv,
  warn?: (line: string) => void,
): RegistryApiClient {
  const token = env.MOAT_REGISTRY_TOKEN;
  return new RegistryApiClient(source.location, {
    allowPrivateIp: source.allowPrivateIp,
    cache: ResponseCache.forEnv(env),
    ...(token ? { token } : {}),
    ...(warn ? { notice: warn } : {}),
  });
}

/** The catalog, or the catalog merged with a registry document: everything is in memory. */
function documentRegistry(servers: RegistryServer[]): Registry {
  return {
    list: (opts) => {
      if (opts?.updatedSince !== undefined) {
        return Promise.reject(
          usageError('--updated-since needs a registry API (moat config set-registry <API base URL>)'),
        );
      }
      return Promise.resolve(servers.map(active));
    },
    search: (term) => Promise.resolve(searchServers(servers, term).map(active)),
    find: (name, version) => Promise.resolve().then(() => findInDocument(servers, name, version)),
    known: () => servers,
  };
}

function findInDocument(
  servers: readonly RegistryServer[],
  name: string,
  version: string | undefined,
): RegistryEntry | undefined {
  const server = findServer(servers, name);
  if (server && version !== undefined && server.version !== version) {
    throw usageError(
      `${server.name} has no version ${version} in the registry (it has ${server.version ?? 'no version'})`,
    );
  }
  return server && active(server);
}

/** The catalog overridden by an API registry, asked only for what each command needs. */
class ApiRegistry implements Registry {
  private readonly seen = new Map<string, RegistryServer>();

  constructor(
    private readonly catalog: RegistryServer[],
    private readonly client: RegistryApiClient,
    private readonly fallback: (err: unknown) => RegistryServer[],
    private readonly warn?: (line: string) => void,
  ) {}

  async list(opts: { updatedSince?: string } = {}): Promise<RegistryEntry[]> {
    const remote = await this.listed({ version: 'latest', ...opts });
    return merged(opts.updatedSince ? [] : this.catalog, remote);
  }

  async search(term: string): Promise<RegistryEntry[]> {
    return merged(searchServers(this.catalog, term), await this.listed({ search: term, version: 'latest' }));
  }

  async find(name: string, version?: string): Promise<RegistryEntry | undefined> {
    const fullName = name.includes('/') ? name : await this.fullNameOf(name);
    if (fullName !== undefined) {
      const entry = await this.remote(fullName, version);
      if (entry) return entry;
    }
    return findInDocument(this.catalog, name, version);
  }

  known(): RegistryServer[] {
    return mergeRegistries(this.catalog, [...this.seen.values()]);
  }

  /**
   * The API's server with this short name (searched by name, deleted ones too so that running
   * one is refused by name), unless the name is ambiguous.
   */
  private async fullNameOf(short: string): Promise<string | undefined> {
    const remote = (
      await this.listed({ search: short, version: 'latest', includeDeleted: true }, true)
    ).filter((e) => shortName(e.server.name) === short);
    // Ambiguity is judged over the catalog and the API together, as for a registry document.
    const server = findServer(
      mergeRegistries(
        this.catalog,
        remote.map((e) => e.server),
      ),
      short,
    );
    return remote.some((e) => e.server.name === server?.name) ? server?.name : undefined;
  }

  private async remote(name: string, version?: string): Promise<RegistryEntry | undefined> {
    let answer: RegistryEntry[] | RegistryEntry | undefined;
    try {
      answer =
        version === undefined ? await this.client.versions(name) : await this.client.version(name, version);
    } catch (err) {
      this.fallback(err);
      return undefined;
    }
    if (answer === undefined && version !== undefined) await this.noSuchVersion(name, version);
    const entry = Array.isArray(answer) ? latestUsable(answer) : answer;
    if (entry) this.seen.set(entry.server.name, entry.server);
    return entry;
  }

  private async noSuchVersion(name: string, version: string): Promise<void> {
    const versions = await this.client.versions(name).catch(() => undefined);
    if (!versions || versions.length === 0) return;
    const names = versions.map((v) => v.server.version ?? '?').join(', ');
    throw usageError(`${name} has no version ${version} in the registry (it has ${names})`);
  }

  private async listed(query: ListQuery, keepDeleted = false): Promise<RegistryEntry[]> {
    let listed;
    try {
      listed = await this.client.listServers(query);
    } catch (err) {
      this.fallback(err);
      return [];
    }
    if (listed.skipped.length > 0) {
      this.warn?.(
        `${listed.skipped.length} registry entries left out (moat cannot use them), e.g. ${listed.skipped[0]}`,
      );
    }
    const live = listed.entries.filter((e) => keepDeleted || e.status !== 'deleted');
    for (const e of live) this.seen.set(e.server.name, e.server);
    return live;
  }
}

/** Catalog entries overridden by the API's entries of the same name, sorted by name. */
function merged(catalog: RegistryServer[], remote: RegistryEntry[]): RegistryEntry[] {
  const byName = new Map<string, RegistryEntry>(catalog.map((s) => [s.name, active(s)]));
  for (const entry of remote) byName.set(entry.server.name, entry);
  return [...byName.values()].sort((a, b) => a.server.name.localeCompare(b.server.name));
}

/**
 * What `moat registry serve` serves: the catalog overridden by the files (a later file wins), or
 * without files by the configured registry when it is a file.
 */
export async function serversToServe(files: readonly string[], env: NodeJS.ProcessEnv = process.env) {
  const configured = files.length === 0 ? await configuredRegistry(env) : undefined;
  const paths =
    configured && !isUrl(configured.location) ? [configured.location] : files.map((f) => resolve(f));
  const layers = await Promise.all(
    paths.map((location) => loadRegistry({ location, allowPrivateIp: false })),
  );
  return { servers: mergeRegistries(catalogServers(), ...layers), files: paths };
}
