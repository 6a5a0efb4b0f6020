/**
 * The zod side of the kinds, without an API server: defaults, and rule failures reported at the field the CEL
 * rule names (the real-server table is test/integration/operator/crds.test.ts).
 */
import { describe, expect, it } from 'vitest';
import {
  mcpExternalAuthConfigSpecSchema,
  mcpOidcConfigSpecSchema,
  mcpRemoteProxySpecSchema,
  mcpRemoteProxyStatusSchema,
  mcpTelemetryConfigSpecSchema,
  mcpToolConfigSpecSchema,
} from './index.js';

const remoteUrl = 'https://mcp.example.com/mcp';

function issues(
  schema: { safeParse(v: unknown): { error?: { issues: { path: PropertyKey[]; message: string }[] } } },
  value: unknown,
) {
  return (schema.safeParse(value).error?.issues ?? []).map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('MCPRemoteProxy spec', () => {
  it('applies the spec §2.2 defaults and leaves replicas unset', () => {
    const spec = mcpRemoteProxySpecSchema.parse({
      remoteUrl,
      sessionStorage: { provider: 'redis', address: 'r:6379' },
      authzConfig: { configMap: { name: 'authz' } },
    });
    expect(spec).toEqual({
      remoteUrl,
      allowPrivateEndpoint: false,
      proxyPort: 8080,
      transport: 'streamable-http',
      trustProxyHeaders: false,
      sessionAffinity: 'ClientIP',
      sessionStorage: { provider: 'redis', address: 'r:6379', db: 0 },
      authzConfig: { type: 'configMap', configMap: { name: 'authz', key: 'authz.json' } },
    });
  });

  it.each([
    [
      { sessionStorage: { provider: 'redis' } },
      "sessionStorage.address: address is required when provider is 'redis'",
    ],
    [
      { sessionStorage: { provider: 'memory', tls: {} } },
      "sessionStorage.tls: tls is allowed only when provider is 'redis'",
    ],
    [
      {
        sessionStorage: {
          provider: 'redis',
          address: 'r',
          tls: { caCertSecretRef: { name: 'a', key: 'b' }, insecureSkipVerify: true },
        },
      },
      'sessionStorage.tls.insecureSkipVerify: caCertSecretRef and insecureSkipVerify: true cannot be combined',
    ],
    [
      { sessionStorage: { provider: 'memory', commandTimeout: '1s' } },
      "sessionStorage.commandTimeout: commandTimeout is allowed only when provider is 'redis'",
    ],
    [
      { sessionStorage: { provider: 'redis', address: 'r', commandTimeout: '0ms' } },
      'sessionStorage.commandTimeout: must be a positive duration such as 30s, 5m or 1h30m',
    ],
    [{ upstreamTimeout: '0s' }, 'upstreamTimeout: must be a positive duration such as 30s, 5m or 1h30m'],
    [
      { authzConfig: { configMap: { name: 'a' } }, authzConfigRef: { name: 'b' } },
      'authzConfigRef: authzConfig and authzConfigRef are mutually exclusive',
    ],
    [{ authzConfig: { type: 'inline' } }, "authzConfig.inline: inline must be set when type is 'inline'"],
    [
      {
        headerForward: {
          addHeadersFromSecret: [
            { headerName: 'X', valueSecretRef: { name: 'a', key: 'b' } },
            { headerName: 'X', valueSecretRef: { name: 'a', key: 'b' } },
          ],
        },
      },
      'headerForward.addHeadersFromSecret.1: duplicate headerName ["X"]',
    ],
    [
      { resourceOverrides: { proxyDeployment: { tolerations: [{ value: 'v' }] } } },
      'resourceOverrides.proxyDeployment.tolerations.0.operator: operator must be Exists when key is empty',
    ],
  ])('rejects %j at the field', (extra, message) => {
    expect(issues(mcpRemoteProxySpecSchema, { remoteUrl, ...extra }).join('\n')).toContain(message);
  });
});

describe('status', () => {
  it('accepts a Kubernetes timestamp and rejects anything else as lastTransitionTime', () => {
    const condition = { type: 'Ready', status: 'True', reason: 'Available', message: '' };
    expect(
      issues(mcpRemoteProxyStatusSchema, {
        conditions: [{ ...condition, lastTransitionTime: '2026-11-24T17:00:00Z' }],
      }),
    ).toEqual([]);
    expect(
      issues(mcpRemoteProxyStatusSchema, {
        conditions: [{ ...condition, lastTransitionTime: '24 Nov 2026' }],
      }),
    ).toEqual(['conditions.0.lastTransitionTime: must be an RFC 3339 date-time']);
  });
});

describe('referenced kinds', () => {
  it('OIDC: service-account defaults, https unless allowed', () => {
    expect(
      mcpOidcConfigSpecSchema.parse({ type: 'kubernetesServiceAccount', kubernetesServiceAccount: {} }),
    ).toEqual({
      type: 'kubernetesServiceAccount',
      kubernetesServiceAccount: { issuer: 'https://kubernetes.default.svc', useClusterAuth: true },
    });
    expect(issues(mcpOidcConfigSpecSchema, { type: 'inline', inline: { issuer: 'http://idp' } })).toEqual([
      'inline.issuer: issuer must be an https:// URL unless insecureAllowHTTP is true',
    ]);
  });

  it('external auth: exactly the block of the type', () => {
    expect(
      issues(mcpExternalAuthConfigSpecSchema, {
        type: 'unauthenticated',
        bearerToken: { tokenSecretRef: { name: 'a', key: 'b' } },
      }),
    ).toEqual(["bearerToken: bearerToken must be set if and only if type is 'bearerToken'"]);
  });

  it('telemetry: sampling defaults to 0.1 and enabled signals need an endpoint', () => {
    expect(
      mcpTelemetryConfigSpecSchema.parse({
        openTelemetry: { endpoint: 'c:4318', tracing: { enabled: true } },
      }),
    ).toMatchObject({
      openTelemetry: { tracing: { enabled: true, samplingRate: 0.1 }, insecure: false },
    });
    expect(issues(mcpTelemetryConfigSpecSchema, { openTelemetry: { metrics: { enabled: true } } })).toEqual([
      'openTelemetry.endpoint: endpoint is required when tracing or metrics is enabled',
    ]);
  });

  it('tool config: unique filter entries, overrides that change something', () => {
    expect(issues(mcpToolConfigSpecSchema, { toolsFilter: ['a', 'a'], toolsOverride: { a: {} } })).toEqual([
      'toolsFilter: items must be unique',
      'toolsOverride.a: a tool override must set name or description',
    ]);
  });
});
