/** Small client for moat.dev custom objects in tests: create/read/delete/replace-status with the API server's text. */
import { ApiException, CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION, type KindDefinition } from '../../src/operator/crd/index.js';

export type StoredObject = Record<string, unknown> & {
  metadata: { name: string; resourceVersion?: string; generation?: number };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
};

export type Outcome = { ok: true; object: StoredObject } | { ok: false; code: number; message: string };

/** The message of a failed API call: the Status `message` the API server sent (it names the field). */
export function apiErrorMessage(error: unknown): { code: number; message: string } {
  if (!(error instanceof ApiException)) throw error;
  const body: unknown = typeof error.body === 'string' ? safeJson(error.body) : error.body;
  const message =
    body && typeof body === 'object' && 'message' in body ? String(body.message) : String(error.body);
  return { code: error.code, message };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export class CustomObjects {
  private readonly api: CustomObjectsApi;
  private readonly core: CoreV1Api;
  private counter = 0;

  constructor(
    kc: KubeConfig,
    readonly namespace: string,
  ) {
    this.api = kc.makeApiClient(CustomObjectsApi);
    this.core = kc.makeApiClient(CoreV1Api);
  }

  async createNamespace(): Promise<void> {
    await this.core.createNamespace({ body: { metadata: { name: this.namespace } } });
  }

  uniqueName(prefix: string): string {
    return `${prefix}-${++this.counter}`;
  }

  private target(kind: KindDefinition) {
    return { group: API_GROUP, version: API_VERSION, namespace: this.namespace, plural: kind.plural };
  }

  create(kind: KindDefinition, body: Record<string, unknown>): Promise<Outcome> {
    const name = this.uniqueName(kind.singular);
    const object = {
      apiVersion: `${API_GROUP}/${API_VERSION}`,
      kind: kind.kind,
      metadata: { name },
      ...body,
    };
    return this.attempt(() => this.api.createNamespacedCustomObject({ ...this.target(kind), body: object }));
  }

  /** The API server's answer as an outcome: the stored object, or the refusal's message and code. */
  private async attempt(call: () => Promise<unknown>): Promise<Outcome> {
    try {
      return { ok: true, object: (await call()) as StoredObject };
    } catch (error) {
      return { ok: false, ...apiErrorMessage(error) };
    }
  }

  async get(kind: KindDefinition, name: string): Promise<StoredObject> {
    return (await this.api.getNamespacedCustomObject({ ...this.target(kind), name })) as StoredObject;
  }

  replace(kind: KindDefinition, object: StoredObject): Promise<Outcome> {
    return this.attempt(() =>
      this.api.replaceNamespacedCustomObject({
        ...this.target(kind),
        name: object.metadata.name,
        body: object,
      }),
    );
  }

  replaceStatus(kind: KindDefinition, object: StoredObject): Promise<Outcome> {
    return this.attempt(() =>
      this.api.replaceNamespacedCustomObjectStatus({
        ...this.target(kind),
        name: object.metadata.name,
        body: object,
      }),
    );
  }

  async delete(kind: KindDefinition, name: string): Promise<void> {
    try {
      await this.api.deleteNamespacedCustomObject({ ...this.target(kind), name });
    } catch (error) {
      if (apiErrorMessage(error).code !== 404) throw error;
    }
  }
}
