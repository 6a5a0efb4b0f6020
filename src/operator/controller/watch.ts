/**
 * Informers (client-node's `makeInformer`) per (kind, namespace), over all namespaces or a listed
 * set, that turn every add, update and delete into work-queue keys through a caller-given mapping:
 * the object itself, its controlling owner, or the primaries that name it. client-node's informer
 * relists after 410 Gone and re-watches after a quiet timeout itself, but gives up on any other error
 * (a 429 right after a CRD is established, a 403, a dropped connection): here it is restarted with
 * backoff, and the failure is kept so readiness can say why it is not synced.
 */
import {
  makeInformer,
  type Informer,
  type KubeConfig,
  type KubernetesObject,
  type ObjectCache,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { KubeClient } from './client.js';
import { collectionPath, objectKey, type KubeObject, type ResourceType } from './resource.js';

/** Read access to what the informers hold, for mappings and reconcilers. */
export interface CacheReader {
  list<T extends KubeObject = KubeObject>(type: ResourceType, namespace?: string): T[];
  get<T extends KubeObject = KubeObject>(type: ResourceType, name: string, namespace?: string): T | undefined;
}

/** From a changed object to the keys of the primaries to reconcile. */
export type KeyMapper = (obj: KubeObject, cache: CacheReader) => string[];

export interface WatchSource {
  type: ResourceType;
  toKeys: KeyMapper;
  labelSelector?: string;
}

/** The object is itself the primary. */
export const selfKey: KeyMapper = (obj) => [objectKey(obj)];

/** The primary is the object's controlling owner of kind `owner` (owner references, as apply.ts writes them). */
export function controllerOwnerKey(owner: ResourceType): KeyMapper {
  const group = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0] : '');
  return (obj) => {
    const namespace = obj.metadata?.namespace;
    return (obj.metadata?.ownerReferences ?? [])
      .filter(
        (ref) =>
          ref.controller === true &&
          ref.kind === owner.kind &&
          group(ref.apiVersion) === group(owner.apiVersion),
      )
      .map((ref) => (namespace ? `${namespace}/${ref.name}` : ref.name));
  };
}

export interface WatchesOptions {
  kubeConfig: KubeConfig;
  /** Namespaces to watch; undefined watches all. */
  namespaces?: string[];
  sources: WatchSource[];
  enqueue: (key: string) => void;
  log: Logger;
  /** First restart delay after an informer error; doubles per failure, capped at 30 s. */
  restartBaseMs?: number;
}

const RESTART_MAX_MS = 30_000;

function typeId(type: ResourceType): string {
  return `${type.apiVersion}/${type.plural}`;
}

/** One informer on one collection path, restarted with backoff after errors. */
class RestartingInformer {
  readonly informer: Informer<KubernetesObject> & ObjectCache<KubernetesObject>;
  synced = false;
  lastError: string | undefined;
  private failures = 0;
  private attempt = 0;
  private failedAttempt = -1;
  private restartTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly waiters: (() => void)[] = [];

  constructor(
    readonly path: string,
    type: ResourceType,
    kubeConfig: KubeConfig,
    labelSelector: string | undefined,
    onChange: (obj: KubeObject) => void,
    private readonly log: Logger,
    private readonly restartBaseMs: number,
  ) {
    const client = new KubeClient(kubeConfig);
    const listFn = async () => {
      const list = await client.list(path, labelSelector);
      // List items carry no kind; mappings may read it, as they can on watch events.
      for (const item of list.items) Object.assign(item, { apiVersion: type.apiVersion, kind: type.kind });
      return list as unknown as { metadata: { resourceVersion?: string }; items: KubernetesObject[] };
    };
    this.informer = makeInformer(kubeConfig, path, listFn, labelSelector);
    const changed = (obj: KubernetesObject) => onChange(obj as unknown as KubeObject);
    this.informer.on('add', changed);
    this.informer.on('update', changed);
    this.informer.on('delete', changed);
    this.informer.on('error', (err: unknown) => this.failed(err));
  }

  async start(): Promise<void> {
    if (this.stopped) return;
    const attempt = ++this.attempt;
    await this.informer.start();
    // client-node opens the watch even if stop() came during the list: close it now that it exists.
    if (this.stopped) return this.informer.stop();
    // An error during the list or the first watch request has already been reported by now.
    if (this.failedAttempt === attempt) return;
    this.failures = 0;
    this.lastError = undefined;
    if (!this.synced) this.log.debug({ path: this.path }, 'informer synced');
    this.synced = true;
    this.waiters.splice(0).forEach((wake) => wake());
  }

  whenSynced(): Promise<void> {
    return this.synced ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    this.waiters.splice(0).forEach((wake) => wake());
    await this.informer.stop();
  }

  private failed(err: unknown): void {
    this.failedAttempt = this.attempt;
    this.lastError = describeWatchError(this.path, err);
    if (this.stopped || this.restartTimer) return;
    const delay = Math.min(this.restartBaseMs * 2 ** this.failures, RESTART_MAX_MS);
    this.failures++;
    this.log.warn({ path: this.path, err: this.lastError, retryInMs: delay }, 'informer failed; restarting');
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      void this.start();
    }, delay);
  }
}

/** The watch request's error has only the HTTP status; say which request and verb it was. */
function describeWatchError(path: string, err: unknown): string {
  const e = err as { statusCode?: number; message?: string };
  if (e.statusCode === 403)
    return `watch ${path}: 403 Forbidden (the account lacks the "watch" verb on this resource)`;
  if (e.statusCode) return `watch ${path}: ${e.statusCode} ${e.message ?? ''}`.trim();
  return err instanceof Error ? err.message : String(err);
}

export class Watches implements CacheReader {
  private readonly informers = new Map<string, RestartingInformer[]>();

  constructor(private readonly options: WatchesOptions) {
    const byType = new Map<string, WatchSource[]>();
    for (const source of options.sources) {
      byType.set(typeId(source.type), [...(byType.get(typeId(source.type)) ?? []), source]);
    }
    for (const [id, sources] of byType) {
      const { type, labelSelector } = sources[0]!;
      if (sources.some((s) => s.labelSelector !== labelSelector)) {
        throw new Error(`watches of ${type.kind} must share one labelSelector`);
      }
      const onChange = (obj: KubeObject) => {
        for (const source of sources) for (const key of source.toKeys(obj, this)) options.enqueue(key);
      };
      const scopes = type.namespaced && options.namespaces ? options.namespaces : [undefined];
      this.informers.set(
        id,
        scopes.map(
          (ns) =>
            new RestartingInformer(
              collectionPath(type, ns),
              type,
              options.kubeConfig,
              labelSelector,
              onChange,
              options.log,
              options.restartBaseMs ?? 500,
            ),
        ),
      );
    }
  }

  start(): void {
    for (const informer of this.all()) void informer.start();
  }

  get synced(): boolean {
    return this.all().every((i) => i.synced);
  }

  /** Why the informers are not synced yet, one line each; empty when they all are. */
  notSynced(): string[] {
    return this.all()
      .filter((i) => !i.synced)
      .map((i) => `${i.path}: ${i.lastError ?? 'not listed yet'}`);
  }

  /** Resolves when every informer has listed and watches; rejects after `timeoutMs` saying which did not. */
  async waitForSync(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(new Error(`informers not synced within ${timeoutMs} ms: ${this.notSynced().join('; ')}`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([Promise.all(this.all().map((i) => i.whenSynced())), bound]);
    } finally {
      clearTimeout(timer);
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.all().map((i) => i.stop()));
  }

  list<T extends KubeObject = KubeObject>(type: ResourceType, namespace?: string): T[] {
    return this.of(type).flatMap((i) => i.informer.list(namespace) as unknown as T[]);
  }

  get<T extends KubeObject = KubeObject>(
    type: ResourceType,
    name: string,
    namespace?: string,
  ): T | undefined {
    for (const i of this.of(type)) {
      const found = i.informer.get(name, namespace);
      if (found) return found as unknown as T;
    }
    return undefined;
  }

  private of(type: ResourceType): RestartingInformer[] {
    const informers = this.informers.get(typeId(type));
    if (!informers) throw new Error(`${type.kind} is not watched; add it to the controller's watches`);
    return informers;
  }

  private all(): RestartingInformer[] {
    return [...this.informers.values()].flat();
  }
}
