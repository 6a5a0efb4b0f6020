import { describe, expect, it } from 'vitest';
import {
  mcpExternalAuthConfigSpecSchema,
  mcpOidcConfigSpecSchema,
  mcpTelemetryConfigSpecSchema,
} from '../crd/index.js';
import { makeConfig, makeInputs } from './fixtures.js';
import { planProxy } from './plan.js';
import { referencedConfigMapNames, referencedObjects, referencedSecretNames } from './references.js';

const OPTIONS = { proxyImage: 'img' };

describe('planProxy', () => {
  it('builds the objects when every check passes', () => {
    const plan = planProxy(makeInputs({ remoteUrl: 'https://mcp.example.com' }), OPTIONS);
    expect(plan.desired?.deployment.metadata?.name).toBe('mcp-github-remote-proxy');
    expect(plan.buildError).toBeUndefined();
  });

  it('builds nothing when a blocking check fails', () => {
    const plan = planProxy(makeInputs({ remoteUrl: 'http://127.0.0.1' }), OPTIONS);
    expect(plan.desired).toBeUndefined();
    expect(plan.checks.find((c) => c.type === 'RemoteURLValid')?.status).toBe('False');
  });

  it('builds despite an advisory warning', () => {
    expect(
      planProxy(makeInputs({ remoteUrl: 'https://mcp.example.com', replicas: 3 }), OPTIONS).desired,
    ).toBeDefined();
  });

  it('builds nothing while deleting', () => {
    const inputs = makeInputs({ remoteUrl: 'https://mcp.example.com' });
    inputs.proxy.metadata.deletionTimestamp = new Date();
    expect(planProxy(inputs, OPTIONS).desired).toBeUndefined();
  });

  it('reports a RunConfig the schema refuses as a build error', () => {
    const inputs = makeInputs({ remoteUrl: 'https://mcp.example.com' });
    inputs.proxy.metadata.name = '';
    const plan = planProxy(inputs, OPTIONS);
    expect(plan.desired).toBeUndefined();
    expect(plan.buildError).toMatch(/RunConfig is invalid: field name/);
  });
});

describe('references', () => {
  const inputs = makeInputs(
    {
      remoteUrl: 'https://mcp.example.com',
      oidcConfigRef: { name: 'idp', audience: 'a' },
      externalAuthConfigRef: { name: 'out' },
      telemetryConfigRef: { name: 'otel' },
      groupRef: { name: 'g' },
      authzConfig: { type: 'configMap', configMap: { name: 'authz' } },
      headerForward: {
        addHeadersFromSecret: [{ headerName: 'X', valueSecretRef: { name: 'keys', key: 'k' } }],
      },
      sessionStorage: {
        provider: 'redis',
        address: 'r:6379',
        passwordRef: { name: 'redis', key: 'p' },
        tls: { caCertSecretRef: { name: 'redis', key: 'ca' } },
      },
    },
    {
      oidcConfig: makeConfig('MCPOIDCConfig', mcpOidcConfigSpecSchema, 'idp', {
        type: 'inline',
        inline: {
          issuer: 'https://i',
          clientId: 'c',
          clientSecretRef: { name: 'idp-secret', key: 's' },
          caBundleRef: { name: 'idp-ca' },
        },
      }),
      externalAuthConfig: makeConfig('MCPExternalAuthConfig', mcpExternalAuthConfigSpecSchema, 'out', {
        type: 'bearerToken',
        bearerToken: { tokenSecretRef: { name: 'token', key: 't' } },
      }),
      telemetryConfig: makeConfig('MCPTelemetryConfig', mcpTelemetryConfigSpecSchema, 'otel', {
        openTelemetry: { endpoint: 'otel:4318', caBundleRef: { name: 'otel-ca' } },
      }),
    },
  );

  it('lists the referenced objects', () => {
    expect(referencedObjects(inputs.proxy.spec)).toEqual({
      oidcConfig: 'idp',
      externalAuthConfig: 'out',
      telemetryConfig: 'otel',
      group: 'g',
    });
  });

  it('lists the Secrets and ConfigMaps to read, once each', () => {
    expect(referencedSecretNames(inputs)).toEqual(['idp-secret', 'keys', 'redis', 'token']);
    expect(referencedConfigMapNames(inputs)).toEqual(['authz', 'idp-ca', 'otel-ca']);
  });
});
