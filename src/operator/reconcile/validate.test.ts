import { describe, expect, it } from 'vitest';
import {
  mcpAuthzConfigSpecSchema,
  mcpExternalAuthConfigSpecSchema,
  mcpGroupSpecSchema,
  mcpOidcConfigSpecSchema,
  mcpTelemetryConfigSpecSchema,
  mcpToolConfigSpecSchema,
  type MCPRemoteProxySpecInput,
} from '../crd/index.js';
import { makeConfig, makeInputs, secret } from './fixtures.js';
import type { ProxyInputs } from './inputs.js';
import { validateProxy, type CheckResult } from './validate.js';

const REMOTE = 'https://mcp.example.com/mcp';

function check(
  spec: Omit<MCPRemoteProxySpecInput, 'remoteUrl'> & { remoteUrl?: string },
  extra: Partial<ProxyInputs> = {},
) {
  const results = validateProxy(makeInputs({ remoteUrl: REMOTE, ...spec }, extra));
  return (type: string): CheckResult | undefined => results.find((r) => r.type === type);
}

describe('validateProxy', () => {
  it.each([
    [{ addPlaintextHeaders: { 'X-Tenant': 'a' } }, 'True', 'HeaderNamesAllowed', /allowed/],
    [
      { addPlaintextHeaders: { Host: 'evil' } },
      'False',
      'HeaderNotAllowed',
      /addPlaintextHeaders: the Host header/,
    ],
    [
      { addHeadersFromSecret: [{ headerName: 'X-Forwarded-For', valueSecretRef: { name: 's', key: 'k' } }] },
      'False',
      'HeaderNotAllowed',
      /addHeadersFromSecret: the X-Forwarded-For header cannot be set/,
    ],
    [{ addPlaintextHeaders: { 'transfer-encoding': 'x' } }, 'False', 'HeaderNotAllowed', /transfer-encoding/],
  ])('headerForward %j → %s %s', (headerForward, status, reason, message) => {
    const result = check({ headerForward }, { secrets: { s: secret('k') } })('HeaderForwardValid');
    expect(result).toMatchObject({ status, reason, blocking: true });
    expect(result?.message).toMatch(message);
  });

  it('a minimal proxy has only the remote URL check and the session advisory', () => {
    const results = validateProxy(makeInputs({ remoteUrl: REMOTE }));
    expect(results.map((r) => [r.type, r.status, r.reason])).toEqual([
      ['RemoteURLValid', 'True', 'RemoteURLAllowed'],
      ['SessionStorageWarning', 'False', 'SessionStorageWarningNotApplicable'],
    ]);
  });

  it.each([
    ['http://169.254.169.254/', false, 'False', /cloud metadata/],
    ['http://10.0.0.1/', false, 'False', /allowPrivateEndpoint/],
    ['http://10.0.0.1/', true, 'True', /allowed/],
    ['http://backend.ns.svc:8080/mcp', false, 'True', /allowed/],
  ])('remoteUrl %s (allowPrivateEndpoint %s) → %s', (remoteUrl, allowPrivateEndpoint, status, message) => {
    const result = check({ remoteUrl, allowPrivateEndpoint })('RemoteURLValid');
    expect(result).toMatchObject({ status, blocking: true });
    expect(result?.message).toMatch(message);
  });

  describe('spec.authzConfig', () => {
    it('accepts policies the Cedar engine parses', () => {
      const result = check({
        authzConfig: { type: 'inline', inline: { policies: ['permit(principal, action, resource);'] } },
      })('AuthzConfigValid');
      expect(result).toMatchObject({ status: 'True', reason: 'AuthzConfigValid' });
    });

    it('reports a Cedar syntax error with the policy index', () => {
      const result = check({
        authzConfig: {
          type: 'inline',
          inline: { policies: ['permit(principal, action, resource);', 'permit(principal action resource)'] },
        },
      })('AuthzConfigValid');
      expect(result).toMatchObject({ status: 'False', reason: 'AuthzPolicySyntaxInvalid', blocking: true });
      expect(result?.message).toMatch(/cedar\.policies\[1\].*does not parse/);
    });

    it('gives the same verdict when the same policies are checked again', () => {
      const spec = {
        authzConfig: { type: 'inline' as const, inline: { policies: ['permit(principal action resource)'] } },
      };
      const first = check(spec)('AuthzConfigValid');
      expect(first?.status).toBe('False');
      expect(check(spec)('AuthzConfigValid')).toEqual(first);
    });

    it('reports bad static entities', () => {
      const result = check({
        authzConfig: {
          type: 'inline',
          inline: { policies: ['permit(principal, action, resource);'], entitiesJson: '{' },
        },
      })('AuthzConfigValid');
      expect(result).toMatchObject({ status: 'False', reason: 'AuthzPolicySyntaxInvalid' });
      expect(result?.message).toMatch(/entities_json is not valid JSON/);
    });

    it.each([
      [{}, 'AuthzConfigMapNotFound', /ConfigMap authz not found in namespace team-a/],
      [{ authz: { data: { other: '' } } }, 'AuthzConfigInvalid', /has no key authz\.json/],
      [{ authz: { data: { 'authz.json': '{"type":"httpv1","cedar":{}}' } } }, 'AuthzConfigInvalid', /httpv1/],
      [
        { authz: { data: { 'authz.json': 'type: cedarv1\ncedar:\n  policies: ["nope"]\n' } } },
        'AuthzPolicySyntaxInvalid',
        /does not parse/,
      ],
    ])('configMap source %#', (configMaps, reason, message) => {
      const result = check(
        { authzConfig: { type: 'configMap', configMap: { name: 'authz' } } },
        { configMaps },
      )('AuthzConfigValid');
      expect(result).toMatchObject({ status: 'False', reason });
      expect(result?.message).toMatch(message);
    });

    it('warns that primaryUpstreamProvider is ignored, without blocking', () => {
      const result = check({
        authzConfig: {
          type: 'inline',
          inline: { policies: ['permit(principal, action, resource);'], primaryUpstreamProvider: 'github' },
        },
      })('AuthzPrimaryUpstreamProviderIgnored');
      expect(result).toMatchObject({
        status: 'True',
        reason: 'PrimaryUpstreamProviderIgnored',
        blocking: false,
      });
      expect(result?.message).toMatch(/github/);
    });
  });

  describe('references', () => {
    const cases: Array<
      [string, Omit<MCPRemoteProxySpecInput, 'remoteUrl'>, keyof ProxyInputs, unknown, string]
    > = [
      [
        'OIDCConfigRefValid',
        { oidcConfigRef: { name: 'x', audience: 'a' } },
        'oidcConfig',
        { type: 'inline', inline: { issuer: 'https://i' } },
        'MCPOIDCConfig',
      ],
      [
        'AuthzConfigRefValid',
        { authzConfigRef: { name: 'x' } },
        'authzConfig',
        { policies: ['permit(principal, action, resource);'] },
        'MCPAuthzConfig',
      ],
      [
        'ExternalAuthConfigRefValid',
        { externalAuthConfigRef: { name: 'x' } },
        'externalAuthConfig',
        { type: 'unauthenticated' },
        'MCPExternalAuthConfig',
      ],
      [
        'TelemetryConfigRefValid',
        { telemetryConfigRef: { name: 'x' } },
        'telemetryConfig',
        {},
        'MCPTelemetryConfig',
      ],
      ['ToolConfigRefValid', { toolConfigRef: { name: 'x' } }, 'toolConfig', {}, 'MCPToolConfig'],
      ['GroupRefValid', { groupRef: { name: 'x' } }, 'group', {}, 'MCPGroup'],
    ];
    const schemas = {
      MCPOIDCConfig: mcpOidcConfigSpecSchema,
      MCPAuthzConfig: mcpAuthzConfigSpecSchema,
      MCPExternalAuthConfig: mcpExternalAuthConfigSpecSchema,
      MCPTelemetryConfig: mcpTelemetryConfigSpecSchema,
      MCPToolConfig: mcpToolConfigSpecSchema,
      MCPGroup: mcpGroupSpecSchema,
    } as const;
    const prefix = (type: string) => type.replace(/Valid$/, '');

    it.each(cases)('%s: missing → False NotFound', (type, spec, _field, _objSpec, kind) => {
      const result = check(spec)(type);
      expect(result).toMatchObject({ status: 'False', reason: `${prefix(type)}NotFound`, blocking: true });
      expect(result?.message).toBe(`${kind} x not found in namespace team-a`);
    });

    it.each(cases)(
      '%s: Valid=False → False NotValid with its message',
      (type, spec, field, objSpec, kind) => {
        const object = makeConfig(kind, schemas[kind as keyof typeof schemas], 'x', objSpec as never, {
          message: 'issuer is wrong',
        });
        const result = check(spec, { [field]: object })(type);
        expect(result).toMatchObject({ status: 'False', reason: `${prefix(type)}NotValid` });
        expect(result?.message).toBe(`${kind} x is not valid: issuer is wrong`);
      },
    );

    it.each(cases)('%s: not yet validated → Unknown', (type, spec, field, objSpec, kind) => {
      const object = makeConfig(kind, schemas[kind as keyof typeof schemas], 'x', objSpec as never);
      object.metadata.generation = 2; // its controller has only seen generation 1
      expect(check(spec, { [field]: object })(type)).toMatchObject({
        status: 'Unknown',
        reason: `${prefix(type)}NotValidatedYet`,
      });
    });

    it.each(cases)('%s: present and Valid → True', (type, spec, field, objSpec, kind) => {
      const object = makeConfig(kind, schemas[kind as keyof typeof schemas], 'x', objSpec as never);
      expect(check(spec, { [field]: object })(type)).toMatchObject({
        status: 'True',
        reason: `${prefix(type)}Valid`,
      });
    });

    it('an absent reference has no condition', () => {
      const results = validateProxy(makeInputs({ remoteUrl: REMOTE }));
      expect(results.map((r) => r.type)).not.toContain('OIDCConfigRefValid');
    });

    it('needs the CA bundle ConfigMap and key of a referenced OIDC config', () => {
      const withCa = makeConfig('MCPOIDCConfig', mcpOidcConfigSpecSchema, 'idp', {
        type: 'inline',
        inline: { issuer: 'https://idp.example.com', caBundleRef: { name: 'idp-ca' } },
      });
      const spec = { oidcConfigRef: { name: 'idp', audience: 'a' } };
      expect(check(spec, { oidcConfig: withCa })('OIDCConfigRefValid')).toMatchObject({
        status: 'False',
        reason: 'CABundleNotFound',
      });
      expect(
        check(spec, { oidcConfig: withCa, configMaps: { 'idp-ca': { data: { other: 'x' } } } })(
          'OIDCConfigRefValid',
        )?.message,
      ).toMatch(/has no key ca\.crt/);
      expect(
        check(spec, { oidcConfig: withCa, configMaps: { 'idp-ca': { data: { 'ca.crt': 'PEM' } } } })(
          'OIDCConfigRefValid',
        ),
      ).toMatchObject({
        status: 'True',
      });
    });

    it('refuses a headerInjection header that headerForward also sets', () => {
      const result = check(
        {
          externalAuthConfigRef: { name: 'x' },
          headerForward: { addPlaintextHeaders: { 'x-auth': 'v' } },
        },
        {
          externalAuthConfig: makeConfig('MCPExternalAuthConfig', mcpExternalAuthConfigSpecSchema, 'x', {
            type: 'headerInjection',
            headerInjection: { headerName: 'X-Auth', valueSecretRef: { name: 's', key: 'k' } },
          }),
        },
      )('ExternalAuthConfigRefValid');
      expect(result).toMatchObject({ status: 'False', reason: 'HeaderConflict' });
    });

    it('refuses a headerInjection header the proxy would refuse at start', () => {
      const result = check(
        { externalAuthConfigRef: { name: 'x' } },
        {
          externalAuthConfig: makeConfig('MCPExternalAuthConfig', mcpExternalAuthConfigSpecSchema, 'x', {
            type: 'headerInjection',
            headerInjection: { headerName: 'Proxy-Authorization', valueSecretRef: { name: 's', key: 'k' } },
          }),
        },
      )('ExternalAuthConfigRefValid');
      expect(result).toMatchObject({ status: 'False', reason: 'HeaderNotAllowed' });
      expect(result?.message).toMatch(
        /headerInjection\.headerName: the Proxy-Authorization header cannot be set/,
      );
    });

    it.each([
      [{}, 'AuthServerRefNotFound'],
      [
        {
          authServerConfig: makeConfig('MCPExternalAuthConfig', mcpExternalAuthConfigSpecSchema, 'as', {
            type: 'unauthenticated',
          }),
        },
        'AuthServerRefNotSupported',
      ],
    ])('authServerRef %# → %s', (extra, reason) => {
      const result = check({ authServerRef: { name: 'as' } }, extra)('AuthServerRefValid');
      expect(result).toMatchObject({ status: 'False', reason, blocking: true });
    });
  });

  describe('secrets', () => {
    const spec = {
      headerForward: {
        addHeadersFromSecret: [{ headerName: 'X-Key', valueSecretRef: { name: 'keys', key: 'api' } }],
      },
      sessionStorage: {
        provider: 'redis' as const,
        address: 'r:6379',
        passwordRef: { name: 'redis', key: 'password' },
      },
      oidcConfigRef: { name: 'idp', audience: 'a' },
    };
    const oidcWithSecret = makeConfig('MCPOIDCConfig', mcpOidcConfigSpecSchema, 'idp', {
      type: 'inline',
      inline: {
        issuer: 'https://idp.example.com',
        clientId: 'c',
        clientSecretRef: { name: 'idp', key: 'secret' },
      },
    });

    it('all present → True', () => {
      const result = check(spec, {
        oidcConfig: oidcWithSecret,
        secrets: { keys: secret('api'), redis: secret('password'), idp: secret('secret') },
      })('SecretsFound');
      expect(result).toMatchObject({ status: 'True', message: 'all 3 referenced Secret keys exist' });
    });

    it('names every missing Secret and key with the field that wants it', () => {
      const result = check(spec, { oidcConfig: oidcWithSecret, secrets: { keys: secret('other') } })(
        'SecretsFound',
      );
      expect(result).toMatchObject({ status: 'False', reason: 'SecretNotFound', blocking: true });
      expect(result?.message).toContain(
        'Secret keys has no key api (spec.headerForward.addHeadersFromSecret[0] (X-Key))',
      );
      expect(result?.message).toContain(
        'Secret redis (spec.sessionStorage.passwordRef) not found in namespace team-a',
      );
      expect(result?.message).toContain('Secret idp (MCPOIDCConfig idp inline.clientSecretRef) not found');
    });

    it('no secrets → no condition', () => {
      expect(check({})('SecretsFound')).toBeUndefined();
    });

    it('a missing Redis CA Secret is reported without blocking', () => {
      const tls = {
        sessionStorage: {
          provider: 'redis' as const,
          address: 'r:6380',
          tls: { caCertSecretRef: { name: 'ca', key: 'ca.crt' } },
        },
      };
      expect(check(tls)('RedisCASecretFound')).toMatchObject({ status: 'False', blocking: false });
      expect(check(tls)('RedisCASecretFound')?.message).toMatch(/ContainerCreating/);
      expect(check(tls, { secrets: { ca: secret('ca.crt') } })('RedisCASecretFound')).toMatchObject({
        status: 'True',
      });
      expect(check(tls)('SecretsFound')).toBeUndefined();
    });
  });

  it.each<[Omit<MCPRemoteProxySpecInput, 'remoteUrl'>, string, string]>([
    [{}, 'False', 'SessionStorageWarningNotApplicable'],
    [{ replicas: 1 }, 'False', 'SessionStorageWarningNotApplicable'],
    [{ replicas: 3 }, 'True', 'SessionStorageMissingForReplicas'],
    [{ replicas: 3, sessionStorage: { provider: 'memory' } }, 'True', 'SessionStorageMissingForReplicas'],
    [
      { replicas: 3, sessionStorage: { provider: 'redis', address: 'r:6379' } },
      'True',
      'SessionAffinityNotNone',
    ],
    [
      { replicas: 3, sessionAffinity: 'None', sessionStorage: { provider: 'redis', address: 'r:6379' } },
      'False',
      'SessionStorageConfigured',
    ],
  ])('SessionStorageWarning for %j → %s %s', (spec, status, reason) => {
    expect(check(spec)('SessionStorageWarning')).toMatchObject({ status, reason, blocking: false });
  });

  it.each<[Record<string, unknown>, string | undefined]>([
    [{ spec: { runtimeClassName: 'x' } }, undefined],
    [{ spec: 'x' }, '.spec must be an object'],
    [{ metadata: { labels: { a: 1 } } }, '.metadata.labels must map strings to strings'],
    [{ spec: { containers: { name: 'moat' } } }, '.spec.containers must be a list of objects'],
    [{ spec: { containers: [{ image: 'x' }] } }, '.spec.containers[0].name is required'],
    [{ spec: { nodeSelector: { a: true } } }, '.spec.nodeSelector must map strings to strings'],
    [
      { spec: { containers: [{ name: 'moat', env: 'A=1' }] } },
      '.spec.containers[name=moat].env must be a list of objects',
    ],
  ])('podTemplateSpec %j', (podTemplateSpec, problem) => {
    const result = check({ podTemplateSpec })('PodTemplateSpecValid');
    if (problem === undefined) expect(result).toMatchObject({ status: 'True' });
    else
      expect(result).toMatchObject({
        status: 'False',
        reason: 'PodTemplateSpecInvalid',
        message: `spec.podTemplateSpec${problem}`,
      });
  });
});
