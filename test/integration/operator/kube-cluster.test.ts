/**
 * The test Kubernetes API server the global setup starts is real: TLS with our CA, the admin token
 * authenticates as system:masters, anonymous requests are refused, and RBAC is enforced.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { KUBE_VERSION, kubeCluster, kubeConfig } from '../../support/kube-cluster.js';

function call(
  path: string,
  init: { method?: string; token?: string; body?: unknown } = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  const { url, caFile, adminToken } = kubeCluster();
  const token = init.token === undefined ? adminToken : init.token;
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      {
        method: init.method ?? 'GET',
        ca: readFileSync(caFile),
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          'content-type': 'application/json',
        },
        timeout: 10_000,
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString('utf8')));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(body) as Record<string, unknown> }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(init.body === undefined ? undefined : JSON.stringify(init.body));
  });
}

describe('test Kubernetes API server', () => {
  it('reports the version it was built as', async () => {
    const res = await call('/version');
    expect(res.status).toBe(200);
    expect(res.json.gitVersion).toBe(KUBE_VERSION);
  });

  it('refuses anonymous requests', async () => {
    const res = await call('/api/v1/namespaces', { token: '' });
    expect(res.status).toBe(403);
  });

  it('stores objects in etcd for the admin', async () => {
    const name = `smoke-${Date.now()}`;
    const created = await call('/api/v1/namespaces', {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
    });
    expect(created.status).toBe(201);
    const read = await call(`/api/v1/namespaces/${name}`);
    expect((read.json.metadata as { name: string }).name).toBe(name);
  });

  it('enforces RBAC for a ServiceAccount token with no role', async () => {
    const ns = `rbac-${Date.now()}`;
    await call('/api/v1/namespaces', {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    });
    await call(`/api/v1/namespaces/${ns}/serviceaccounts`, {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'nobody' } },
    });
    const tokenRes = await call(`/api/v1/namespaces/${ns}/serviceaccounts/nobody/token`, {
      method: 'POST',
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 600 },
      },
    });
    expect(tokenRes.status).toBe(201);
    const saToken = (tokenRes.json.status as { token: string }).token;
    const denied = await call(`/api/v1/namespaces/${ns}/configmaps`, { token: saToken });
    expect(denied.status).toBe(403);
    expect(String(denied.json.message)).toContain(`system:serviceaccount:${ns}:nobody`);
  });

  it('serves @kubernetes/client-node through kubeConfig()', async () => {
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const name = `client-${Date.now()}`;
    await core.createNamespace({ body: { metadata: { name } } });
    const list = await core.listNamespace();
    expect(list.items.map((n) => n.metadata?.name)).toContain(name);
  });
});
