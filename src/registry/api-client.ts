/**
 * The client of an MCP Registry API (`GET /v0.1/servers` with `cursor`, `limit`, `search`,
 * `version`, `updated_since`; `/v0.1/servers/{name}/versions` and `…/versions/{version}`).
 * Every request goes through the guarded fetch (SSRF rules, no redirects, time and size limits)
 * and the response cache; a listing is bounded in pages, bytes and total time, and stops at a
 * cursor it has seen before. Answers are checked against the API's shape before anything is
 * cached: a failed operation caches nothing.
 */
import type * as z from 'zod';
import { errorMessage, MoatError, runtimeError, usageError } from '../util/errors.js';
import {
  API_PREFIX,
  entryFromResponse,
  serverListSchema,
  serverResponseSchema,
  type RawServerResponse,
  type RegistryEntry,
} from './api-shape.js';
import {
  guardedGet,
  MAX_REGISTRY_BYTES,
  REGISTRY_TIMEOUT_MS,
  RegistryUnreachableError,
} from './guarded-fetch.js';
import type { CachedAnswer, ResponseCache } from './response-cache.js';

/** How long a whole operation (all pages of a listing) may take. */
export const REGISTRY_TOTAL_TIMEOUT_MS = 60_000;
export const MAX_PAGES = 200;
const PAGE_LIMIT = '100';

export interface ApiClientOptions {
  allowPrivateIp: boolean;
  cache?: ResponseCache;
  /** Sent as `Authorization: Bearer …` (a registry served with a token). */
  token?: string;
  /** Per request. */
  timeoutMs?: number;
  /** Per operation (every page of a listing). */
  totalTimeoutMs?: number;
  /** Per operation (the sum of its pages). */
  maxBytes?: number;
  /** Where the one-line "offline, using the cached copy" notice goes. */
  notice?: (line: string) => void;
}

export interface ListQuery {
  search?: string;
  /** `latest`, or an exact version. */
  version?: string;
  /** RFC 3339; the API then includes deleted entries. */
  updatedSince?: string;
  includeDeleted?: boolean;
}

export interface ListedEntries {
  entries: RegistryEntry[];
  /** Entries whose server.json Moat cannot use, with the reason. */
  skipped: string[];
}

/** The registry wants a token Moat did not have, or refused the one it had. */
export class RegistryRefusedError extends MoatError {
  constructor(message: string) {
    super('runtime', message);
  }
}

/** The API's base URL from what the user typed (a trailing `/v0.1/servers` or `/v0.1` is dropped). */
export function apiBaseUrl(location: string): string {
  return location.replace(/\/+$/, '').replace(/\/v0(\.1)?(\/servers)?$/, '');
}

/** One operation's budget: the time and bytes left across its requests. */
class Budget {
  private readonly deadline: number;
  private bytesLeft: number;

  constructor(
    private readonly options: ApiClientOptions,
    private readonly base: string,
  ) {
    this.deadline = Date.now() + (options.totalTimeoutMs ?? REGISTRY_TOTAL_TIMEOUT_MS);
    this.bytesLeft = options.maxBytes ?? MAX_REGISTRY_BYTES;
  }

  timeoutMs(): number {
    const left = this.deadline - Date.now();
    if (left <= 0) {
      const total = (this.options.totalTimeoutMs ?? REGISTRY_TOTAL_TIMEOUT_MS) / 1000;
      throw runtimeError(`registry ${this.base} did not finish answering within ${total} s`);
    }
    return Math.min(left, this.options.timeoutMs ?? REGISTRY_TIMEOUT_MS);
  }

  maxBytes(): number {
    return this.bytesLeft;
  }

  spend(bytes: number): void {
    this.bytesLeft -= bytes;
  }
}

type Fetched<T> = { found: true; value: T } | { found: false };

export class RegistryApiClient {
  readonly base: string;
  private noticed = false;

  constructor(
    location: string,
    private readonly options: ApiClientOptions,
  ) {
    this.base = apiBaseUrl(location);
  }

  /** Checks that the base URL answers `GET /v0.1/servers` as the API does (one entry asked for). */
  async probe(): Promise<void> {
    await this.operation(async (budget) => {
      const url = this.url('/servers', { limit: '1' });
      if (!(await this.getJson(url, serverListSchema, budget)).found) {
        throw usageError(`${url} answered HTTP 404`);
      }
    });
  }

  /** Every page of `GET /v0.1/servers` for the query. */
  async listServers(query: ListQuery = {}): Promise<ListedEntries> {
    return this.operation(async (budget) => {
      const entries: RegistryEntry[] = [];
      const skipped: string[] = [];
      const seen = new Set<string>();
      let cursor: string | undefined;
      for (let page = 1; ; page++) {
        const url = this.url('/servers', {
          limit: PAGE_LIMIT,
          search: query.search,
          version: query.version,
          updated_since: query.updatedSince,
          include_deleted: query.includeDeleted ? 'true' : undefined,
          cursor,
        });
        const answer = await this.getJson(url, serverListSchema, budget);
        if (!answer.found) throw runtimeError(`${url} answered HTTP 404: not an MCP Registry API`);
        for (const item of answer.value.servers) collect(item, entries, skipped);
        const next = answer.value.metadata?.nextCursor ?? undefined;
        if (next === undefined || next === '') return { entries, skipped };
        if (seen.has(next)) {
          throw runtimeError(
            `registry ${this.base} repeated the page cursor ${JSON.stringify(next)}; stopped`,
          );
        }
        if (page >= MAX_PAGES) {
          throw runtimeError(`registry ${this.base} has more than ${MAX_PAGES} pages; stopped`);
        }
        seen.add(next);
        cursor = next;
      }
    });
  }

  /** Every version of a server (deleted ones too), or undefined when the registry has no such server. */
  async versions(name: string): Promise<RegistryEntry[] | undefined> {
    return this.operation(async (budget) => {
      const url = this.url(`/servers/${encodeURIComponent(name)}/versions`, { include_deleted: 'true' });
      const answer = await this.getJson(url, serverListSchema, budget);
      if (!answer.found) return undefined;
      return answer.value.servers.map((item) => usable(item));
    });
  }

  /** One version of a server (deleted too), or undefined when there is none. */
  async version(name: string, version: string): Promise<RegistryEntry | undefined> {
    return this.operation(async (budget) => {
      const path = `/servers/${encodeURIComponent(name)}/versions/${encodeURIComponent(version)}`;
      const answer = await this.getJson(
        this.url(path, { include_deleted: 'true' }),
        serverResponseSchema,
        budget,
      );
      return answer.found ? usable(answer.value) : undefined;
    });
  }

  /** Runs one operation; its answers are cached only when it succeeds. */
  private async operation<T>(run: (budget: Budget) => Promise<T>): Promise<T> {
    try {
      const result = await run(new Budget(this.options, this.base));
      await this.options.cache?.commit();
      return result;
    } catch (err) {
      this.options.cache?.discard();
      throw err;
    }
  }

  private url(path: string, query: Record<string, string | undefined>): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, value);
    const search = params.toString();
    return `${this.base}${API_PREFIX}${path}${search ? `?${search}` : ''}`;
  }

  /** A checked JSON answer: from the cache while fresh, revalidated after, the last copy when offline. */
  private async getJson<S extends z.ZodType>(
    url: string,
    schema: S,
    budget: Budget,
  ): Promise<Fetched<z.infer<S>>> {
    const cache = this.options.cache;
    const cached = usableCopy(await cache?.read(url), schema);
    if (cached && cache?.fresh(cached.answer)) return { found: true, value: cached.value };
    const headers: Record<string, string> = {};
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    if (cached?.answer.etag) headers['if-none-match'] = cached.answer.etag;
    if (cached?.answer.lastModified) headers['if-modified-since'] = cached.answer.lastModified;
    let response;
    try {
      response = await guardedGet(url, {
        allowPrivateIp: this.options.allowPrivateIp,
        headers,
        timeoutMs: budget.timeoutMs(),
        maxBytes: budget.maxBytes(),
      });
    } catch (err) {
      if (cached && err instanceof RegistryUnreachableError) return this.offline(cached, err.message);
      throw err;
    }
    budget.spend(Buffer.byteLength(response.text));
    if (response.status === 304 && cached) {
      cache?.stage({ ...cached.answer, storedAt: Date.now() });
      return { found: true, value: cached.value };
    }
    if (response.status >= 500 && cached) {
      return this.offline(cached, `registry ${this.base} answered HTTP ${response.status}`);
    }
    if (response.status === 404) return { found: false };
    if (response.status === 401 || response.status === 403) {
      throw new RegistryRefusedError(
        `registry ${this.base} refused the request (HTTP ${response.status}); give its token in MOAT_REGISTRY_TOKEN`,
      );
    }
    if (response.status !== 200) throw runtimeError(`${url} answered HTTP ${response.status}`);
    const value = parseAnswer(url, response.text, schema);
    cache?.stage({
      url,
      storedAt: Date.now(),
      body: response.text,
      ...optional('etag', response.headers.get('etag')),
      ...optional('lastModified', response.headers.get('last-modified')),
    });
    return { found: true, value };
  }

  private offline<T>(cached: { answer: CachedAnswer; value: T }, why: string): Fetched<T> {
    if (!this.noticed) {
      this.noticed = true;
      const at = new Date(cached.answer.storedAt).toISOString().replace(/\.\d+Z$/, 'Z');
      this.options.notice?.(`${why}; using the copy cached at ${at}`);
    }
    return { found: true, value: cached.value };
  }
}

/** A cached answer and its value; a copy that no longer parses (another Moat version wrote it) is none. */
function usableCopy<S extends z.ZodType>(
  stored: CachedAnswer | undefined,
  schema: S,
): { answer: CachedAnswer; value: z.infer<S> } | undefined {
  if (!stored) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(stored.body));
    return parsed.success ? { answer: stored, value: parsed.data } : undefined;
  } catch {
    return undefined;
  }
}

function optional(key: 'etag' | 'lastModified', value: string | null): Partial<CachedAnswer> {
  return value === null ? {} : { [key]: value };
}

function parseAnswer<S extends z.ZodType>(url: string, text: string, schema: S): z.infer<S> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw usageError(`${url} did not answer JSON (${errorMessage(err)}): not an MCP Registry API`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    throw usageError(`${url} is not an MCP Registry API answer (${issue?.message ?? 'invalid'}${at})`);
  }
  return parsed.data;
}

function collect(item: RawServerResponse, entries: RegistryEntry[], skipped: string[]): void {
  const entry = entryFromResponse(item);
  if ('invalid' in entry) skipped.push(entry.invalid);
  else entries.push(entry);
}

/** An entry whose server.json Moat cannot use is an error naming the field (it was asked for by name). */
function usable(item: RawServerResponse): RegistryEntry {
  const entry = entryFromResponse(item);
  if ('invalid' in entry) throw usageError(`invalid registry entry ${entry.invalid}`);
  return entry;
}

/**
 * The version `moat run <name>` uses: the latest active one (the registry's `isLatest` among the
 * active versions, else the newest published); with none active, the latest deprecated one;
 * when every version is deleted, the latest of those (the caller refuses it).
 */
export function latestUsable(entries: readonly RegistryEntry[]): RegistryEntry | undefined {
  const live = entries.filter((e) => e.status !== 'deleted');
  const active = live.filter((e) => e.status === 'active');
  const pool = active.length > 0 ? active : live.length > 0 ? live : entries;
  const newestFirst = [...pool].sort((a, b) => (b.publishedAt ?? '').localeCompare(a.publishedAt ?? ''));
  return pool.find((e) => e.isLatest) ?? newestFirst[0];
}
