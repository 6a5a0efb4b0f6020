/**
 * The operator's one probe server covers every controller: /metrics shows the referenced-kind
 * controllers' series beside the MCPRemoteProxy controller's, and /readyz stays 503 (naming the
 * controller) while any controller's informer cannot list, until the RBAC gap is fixed.
 */
import { describe, expect, it } from 'vitest';
import type { Operator } from '../../../src/operator/main.js';
import type { KubeObject } from '../../../src/operator/controller/resource.js';
import { adminClient, eventually, type PolicyRule } from '../../support/kube-controller.js';
import { prepareOperatorNamespace, startOperatorIn } from '../../support/moat-operator.js';
import { stoppedAfterEach } from '../../support/stop-after-each.js';

const started = stoppedAfterEach<Operator>();

async function start(namespace: string, token: string): Promise<Operator> {
  const { operator } = await startOperatorIn(namespace, token);
  started.push(operator);
  return operator;
}

async function get(operator: Operator, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${operator.probePort}${path}`);
  return { status: res.status, body: await res.text() };
}

describe('operator probes', () => {
  it('/metrics shows every controller, not only the MCPRemoteProxy one', async () => {
    const { namespace, token } = await prepareOperatorNamespace('probes');
    const operator = await start(namespace, token);
    await eventually(async () => expect((await get(operator, '/readyz')).status).toBe(200), 20_000);
    await eventually(async () => {
      const { body } = await get(operator, '/metrics');
      for (const controller of ['moat-mcpremoteproxy', 'moat-mcpoidcconfig', 'moat-mcpgroup']) {
        expect(body).toContain(`moat_operator_leader{controller="${controller}"} 1`);
        expect(body).toContain(`moat_operator_workqueue_depth{controller="${controller}"}`);
      }
    }, 20_000);
    // One family header each, though seven controllers feed it.
    const { body } = await get(operator, '/metrics');
    expect(body.match(/^# TYPE moat_operator_leader gauge$/gm)).toHaveLength(1);
  }, 60_000);

  it('/readyz waits for a referenced-kind controller whose informer cannot list', async () => {
    const { namespace, token } = await prepareOperatorNamespace('probes-rbac');
    const admin = adminClient();
    const rolePath = `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles/moat-operator`;
    type Role = KubeObject & { rules: PolicyRule[] };
    const role = await admin.get<Role>(rolePath);
    const withoutGroups = role.rules.map((r) => ({
      ...r,
      resources: r.resources.filter((res) => res !== 'mcpgroups'),
    }));
    await admin.replace<Role>(rolePath, { ...role, rules: withoutGroups });

    const operator = await start(namespace, token);
    await eventually(async () => {
      const { status, body } = await get(operator, '/readyz');
      expect(status).toBe(503);
      expect(body).toMatch(/^moat-mcpgroup: .*mcpgroups/m);
    }, 20_000);

    const current = await admin.get<Role>(rolePath);
    await admin.replace<Role>(rolePath, { ...current, rules: role.rules });
    await eventually(async () => expect((await get(operator, '/readyz')).status).toBe(200), 30_000, 200);
  }, 90_000);
});
