/**
 * A small JSON client for any Kubernetes path, authenticated by client-node's KubeConfig (token, CA,
 * client certificate). One generic client serves every kind and subresource (`/status`), which the
 * typed client-node APIs do not, and its errors carry the API server's own message, e.g. `configmaps
 * is forbidden: User "…" cannot patch resource "configmaps"…`, so a missing RBAC verb is visible.
 */
import { HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { fetch } from 'undici';
import type { KubeObject } from './resource.js';

export const FIELD_MANAGER = 'moat-operator';

export class KubeApiError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    /** HTTP status; 0 when the request never got an answer. */
    readonly status: number,
    /** The API server's `reason`, e.g. `Forbidden`, `Conflict`, `NotFound`. */
    readonly reason: string,
    message: string,
  ) {
    super(`${method} ${path}: ${status ? `${status} ` : ''}${message}`);
    this.name = 'KubeApiError';
  }
}

export function isStatus(err: unknown, status: number): boolean {
  return err instanceof KubeApiError && err.status === status;
}

/** An error body is the API server's Status object, but a proxy in between may answer with anything. */
function parseJson(text: string): object {
  try {
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === 'object' && parsed !== null ? parsed : {};
  } catch {
    return {};
  }
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  /** Bound on the whole request; every request has one. */
  timeoutMs?: number;
}

export interface KubeList<T> {
  metadata?: { resourceVersion?: string };
  items: T[];
}

export class KubeClient {
  private dispatcher: ReturnType<RequestContext['getDispatcher']>;

  /** `timeoutMs` bounds each request that does not set its own bound. */
  constructor(
    readonly kubeConfig: KubeConfig,
    private readonly timeoutMs = 30_000,
  ) {}

  async request<T>(method: HttpMethod, path: string, options: RequestOptions = {}): Promise<T> {
    const server = this.kubeConfig.getCurrentCluster()?.server;
    if (!server) throw new Error('the kubeconfig has no current cluster');
    const url = new URL(server + path);
    for (const [k, v] of Object.entries(options.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const ctx = new RequestContext(url.toString(), method);
    // Headers (a token that may rotate) are applied per request; the TLS dispatcher is kept so
    // connections are reused instead of one new connection pool per request.
    await this.kubeConfig.applySecurityAuthentication(ctx);
    this.dispatcher ??= ctx.getDispatcher();
    let response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          ...ctx.getHeaders(),
          accept: 'application/json',
          ...(options.body === undefined
            ? {}
            : { 'content-type': options.contentType ?? 'application/json' }),
        },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        dispatcher: this.dispatcher,
        signal: AbortSignal.timeout(options.timeoutMs ?? this.timeoutMs),
      });
    } catch (err) {
      throw new KubeApiError(
        method,
        path,
        0,
        'ConnectionFailed',
        err instanceof Error ? err.message : String(err),
      );
    }
    const text = await response.text();
    if (!response.ok) {
      const status = parseJson(text) as { reason?: string; message?: string };
      throw new KubeApiError(
        method,
        path,
        response.status,
        status.reason ?? response.statusText,
        status.message ?? (text || response.statusText),
      );
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }

  get<T extends KubeObject>(path: string): Promise<T> {
    return this.request<T>(HttpMethod.GET, path);
  }

  list<T extends KubeObject>(path: string, labelSelector?: string): Promise<KubeList<T>> {
    return this.request<KubeList<T>>(HttpMethod.GET, path, { query: { labelSelector } });
  }

  create<T extends KubeObject = KubeObject>(path: string, body: KubeObject): Promise<T> {
    return this.request<T>(HttpMethod.POST, path, { body, query: { fieldManager: FIELD_MANAGER } });
  }

  replace<T extends KubeObject>(path: string, body: T): Promise<T> {
    return this.request<T>(HttpMethod.PUT, path, { body, query: { fieldManager: FIELD_MANAGER } });
  }

  mergePatch<T extends KubeObject>(path: string, patch: unknown): Promise<T> {
    return this.request<T>(HttpMethod.PATCH, path, {
      body: patch,
      contentType: 'application/merge-patch+json',
      query: { fieldManager: FIELD_MANAGER },
    });
  }

  delete(path: string, query: RequestOptions['query'] = {}): Promise<unknown> {
    return this.request(HttpMethod.DELETE, path, { query });
  }
}
