/**
 * The examples of docs/operator.md, applied as written (only the namespace changed to the test's)
 * with the operator running under the shipped RBAC: the objects and status the doc describes.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { loadAllYaml } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConfigSchema } from '../../../src/config/runconfig.js';
import { objectPath, type KubeObject, type ResourceType } from '../../../src/operator/controller/resource.js';
import { CONDITION, proxyObjectNames } from '../../../src/operator/reconcile/index.js';
import {
  CONFIG_MAPS,
  DEPLOYMENTS,
  OIDC_CONFIGS,
  REMOTE_PROXIES,
  SECRETS,
  SERVICE_ACCOUNTS,
  SERVICES,
  TOOL_CONFIGS,
} from '../../../src/operator/reconcilers/kinds.js';
import { adminClient, eventually } from '../../support/kube-controller.js';
import {
  loggedErrors,
  startTestOperator,
  type OperatorUnderTest,
  writeKubeconfig,
} from '../../support/moat-operator.js';
import { kubeCluster } from '../../support/kube-cluster.js';

const DOC = fileURLToPath(new URL('../../../docs/operator.md', import.meta.url));
const WAIT_MS = 20_000;
const TYPES: ResourceType[] = [SECRETS, OIDC_CONFIGS, TOOL_CONFIGS, REMOTE_PROXIES];
let env: OperatorUnderTest;
const admin = adminClient();

beforeAll(async () => {
  env = await startTestOperator('docs');
}, 60_000);
afterAll(async () => {
  await env?.operator.stop();
});

/** The YAML block after `<!-- example: NAME -->`, as objects. */
function example(name: string): KubeObject[] {
  const text = readFileSync(DOC, 'utf8');
  const match = new RegExp(`<!-- example: ${name} -->\\s*\`\`\`yaml\\n([\\s\\S]*?)\`\`\``).exec(text);
  if (!match) throw new Error(`docs/operator.md has no example ${name}`);
  return loadAllYaml(match[1]!) as KubeObject[];
}

/** `kubectl apply` of the example, as a cluster user would run it (the admin's token). */
async function apply(objects: KubeObject[]): Promise<void> {
  for (const obj of objects) {
    if (!TYPES.some((t) => t.kind === obj.kind)) {
      throw new Error(`the example has a ${obj.kind}, which this test does not know`);
    }
    expect(obj.metadata?.namespace).toBe('team-a');
  }
  const items = objects.map((obj) => ({ ...obj, metadata: { ...obj.metadata, namespace: env.namespace } }));
  const dir = mkdtempSync(join(tmpdir(), 'moat-kubectl-'));
  try {
    const kubeconfig = join(dir, 'config');
    const manifest = join(dir, 'example.json');
    writeKubeconfig(kubeconfig, kubeCluster().adminToken);
    writeFileSync(manifest, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
    const { stdout } = await promisify(execFile)(
      'kubectl',
      ['--kubeconfig', kubeconfig, 'apply', '-f', manifest],
      {
        timeout: 30_000,
      },
    );
    // One "<kind>/<name> created" line per object of the example.
    expect(stdout.trim().split('\n')).toHaveLength(items.length);
    expect(stdout).not.toMatch(/unchanged|configured/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Status {
  phase?: string;
  url?: string;
  conditions?: { type: string; status: string }[];
  oidcConfigHash?: string;
  toolConfigHash?: string;
}
const statusOf = async (name: string) =>
  ((await admin.get(objectPath(REMOTE_PROXIES, env.namespace, name))).status ?? {}) as Status;
const get = (type: ResourceType, name: string) => admin.get(objectPath(type, env.namespace, name));

type Container = { name: string; env?: { name: string; valueFrom?: unknown }[] };
type Deployment = KubeObject & {
  spec: {
    replicas?: number;
    template: { spec: { containers: Container[]; nodeSelector?: Record<string, string> } };
  };
};

describe('docs/operator.md examples', () => {
  it('the minimal example yields the four objects and a Pending proxy with the documented url', async () => {
    await apply(example('minimal'));
    const names = proxyObjectNames('docs-minimal');
    expect(names.deployment).toBe('mcp-docs-minimal-remote-proxy');
    expect(names.configMap).toBe('mcp-docs-minimal-remote-proxy-config');
    // The Service is applied last in a pass: once it exists, so do the others.
    await eventually(() => get(SERVICES, names.service), WAIT_MS);
    await Promise.all([
      get(DEPLOYMENTS, names.deployment),
      get(SERVICE_ACCOUNTS, names.serviceAccount),
      get(CONFIG_MAPS, names.configMap),
    ]);
    const status = await eventually(async () => {
      const s = await statusOf('docs-minimal');
      expect(s.phase).toBe('Pending');
      return s;
    }, WAIT_MS);
    expect(status.url).toBe(`http://mcp-docs-minimal-remote-proxy.${env.namespace}.svc.cluster.local:8080`);
  });

  it('the full example yields its objects, secrets only as secretKeyRef env, and no warning', async () => {
    await apply(example('full'));
    const names = proxyObjectNames('docs-full');
    const status = await eventually(async () => {
      const s = await statusOf('docs-full');
      expect(s.phase, JSON.stringify(s) + loggedErrors(env.logLines()).join('\n')).toBe('Pending');
      expect(s.conditions?.find((c) => c.type === CONDITION.oidcConfigRef)?.status).toBe('True');
      expect(s.conditions?.find((c) => c.type === CONDITION.toolConfigRef)?.status).toBe('True');
      return s;
    }, WAIT_MS);
    expect(status.conditions?.find((c) => c.type === CONDITION.sessionStorageWarning)?.status).toBe('False');
    expect(status.oidcConfigHash).toMatch(/^[0-9a-f]{16}$/);
    expect(status.toolConfigHash).toMatch(/^[0-9a-f]{16}$/);
    expect(status.url).toMatch(/:9090$/);

    const deployment = (await get(DEPLOYMENTS, names.deployment)) as Deployment;
    expect(deployment.spec.replicas).toBe(2);
    expect(deployment.spec.template.spec.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux' });
    const env_ = deployment.spec.template.spec.containers.find((c) => c.name === 'moat')?.env ?? [];
    expect(env_).toContainEqual({
      name: 'MOAT_SECRET_HEADER_FORWARD_0',
      valueFrom: { secretKeyRef: { name: 'docs-remote-api-key', key: 'token' } },
    });
    expect(env_).toContainEqual({
      name: 'MOAT_SESSION_REDIS_PASSWORD',
      valueFrom: { secretKeyRef: { name: 'docs-redis', key: 'password' } },
    });
    const service = (await get(SERVICES, names.service)) as KubeObject & {
      spec: { sessionAffinity: string; ports: { port: number }[] };
    };
    expect(service.spec.sessionAffinity).toBe('None');
    expect(service.spec.ports[0]?.port).toBe(9090);
    const configMap = await get(CONFIG_MAPS, names.configMap);
    const text = (configMap.data as Record<string, string>)['runconfig.json']!;
    expect(text).not.toContain('replace-me');
    const runConfig = runConfigSchema.parse(JSON.parse(text));
    expect(runConfig.tools_filter).toEqual(['search', 'fetch']);
    expect(runConfig.oidc_config).toMatchObject({ Issuer: 'https://sso.example.com', Audience: 'docs-full' });
    expect(runConfig.header_forward).toBeDefined();
  });
});
