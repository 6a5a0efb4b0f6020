/**
 * The cluster side of the pod tests: the objects a user would apply (also straight from the
 * examples of docs/operator.md), and the proxy's status as the API server has it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadAllYaml } from '@kubernetes/client-node';
import type { KubeObject, ResourceType } from '../../src/operator/controller/resource.js';
import { collectionPath, objectPath } from '../../src/operator/controller/resource.js';
import {
  AUTHZ_CONFIGS,
  OIDC_CONFIGS,
  REMOTE_PROXIES,
  SECRETS,
  TOOL_CONFIGS,
} from '../../src/operator/reconcilers/kinds.js';
import { adminClient, eventually } from './kube-controller.js';

const TYPES: ResourceType[] = [SECRETS, OIDC_CONFIGS, AUTHZ_CONFIGS, TOOL_CONFIGS, REMOTE_PROXIES];

const OPERATOR_DOC = fileURLToPath(new URL('../../docs/operator.md', import.meta.url));

/** The YAML block after `<!-- example: NAME -->` in docs/operator.md, as objects. */
export function docExample(name: string): KubeObject[] {
  const text = readFileSync(OPERATOR_DOC, 'utf8');
  const match = new RegExp(`<!-- example: ${name} -->\\s*\`\`\`yaml\\n([\\s\\S]*?)\`\`\``).exec(text);
  if (!match) throw new Error(`docs/operator.md has no example ${name}`);
  return loadAllYaml(match[1]!) as KubeObject[];
}

/** Creates the objects in `namespace` as the cluster admin (a user's `kubectl apply`). */
export async function applyObjects(namespace: string, objects: KubeObject[]): Promise<void> {
  const admin = adminClient();
  for (const obj of objects) {
    const type = TYPES.find((t) => t.kind === obj.kind);
    if (!type) throw new Error(`applyObjects does not know kind ${obj.kind}`);
    await admin.create(collectionPath(type, namespace), {
      ...obj,
      metadata: { ...obj.metadata, namespace },
    });
  }
}

export interface ProxyCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

export interface ProxyStatus {
  phase?: string;
  message?: string;
  conditions?: ProxyCondition[];
}

export async function proxyStatus(namespace: string, name: string): Promise<ProxyStatus> {
  const proxy = await adminClient().get(objectPath(REMOTE_PROXIES, namespace, name));
  return proxy.status ?? {};
}

/**
 * Waits (bounded) until the operator has applied the objects of the proxy's current generation:
 * its `Ready` condition then waits only for the Deployment (which no kubelet here makes available).
 */
export async function waitForAppliedObjects(
  namespace: string,
  name: string,
  timeoutMs = 30_000,
): Promise<ProxyStatus> {
  return eventually(
    async () => {
      const proxy = await adminClient().get(objectPath(REMOTE_PROXIES, namespace, name));
      const status = (proxy.status ?? {}) as ProxyStatus;
      const ready = status.conditions?.find((c) => c.type === 'Ready');
      if (ready?.reason !== 'DeploymentNotReady' || ready.observedGeneration !== proxy.metadata?.generation) {
        throw new Error(`proxy ${name} has not applied its objects yet: ${JSON.stringify(status)}`);
      }
      return status;
    },
    timeoutMs,
    200,
  );
}

/** An MCPRemoteProxy object in the shape the tests write. */
export function remoteProxy(name: string, spec: Record<string, unknown>): KubeObject {
  return { apiVersion: 'moat.dev/v1beta1', kind: 'MCPRemoteProxy', metadata: { name }, spec };
}

/** An Opaque Secret with string data. */
export function secret(name: string, stringData: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData };
}
