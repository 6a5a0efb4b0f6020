import { describe, expect, it } from 'vitest';
import { runConfigSchema } from '../../config/runconfig.js';
import { ENV_PREFIX } from '../../secrets/environment.js';
import {
  mcpAuthzConfigSpecSchema,
  mcpExternalAuthConfigSpecSchema,
  mcpOidcConfigSpecSchema,
  mcpTelemetryConfigSpecSchema,
  mcpToolConfigSpecSchema,
  type MCPExternalAuthConfigSpecInput,
  type MCPOIDCConfigSpecInput,
} from '../crd/index.js';
import { makeConfig, makeInputs } from './fixtures.js';
import { buildRunConfig } from './runconfig.js';
import { SECRET_ENV_PREFIX } from './secrets.js';

const REMOTE = 'https://mcp.example.com/mcp';
const oidc = (spec: MCPOIDCConfigSpecInput) =>
  makeConfig('MCPOIDCConfig', mcpOidcConfigSpecSchema, 'idp', spec);
const external = (spec: MCPExternalAuthConfigSpecInput) =>
  makeConfig('MCPExternalAuthConfig', mcpExternalAuthConfigSpecSchema, 'out', spec);

describe('buildRunConfig', () => {
  it('renders a minimal proxy', () => {
    const config = buildRunConfig(makeInputs({ remoteUrl: REMOTE }));
    expect(config).toEqual({
      schema_version: 'v0.1.0',
      name: 'github',
      image: '',
      remote_url: REMOTE,
      transport: 'streamable-http',
      proxy_mode: 'streamable-http',
      host: '0.0.0.0',
      port: 8080,
      permission_profile: null,
    });
    expect(runConfigSchema.safeParse(config).success).toBe(true);
  });

  it('uses the secrets provider prefix of src/secrets', () => {
    expect(SECRET_ENV_PREFIX).toBe(ENV_PREFIX);
  });

  it('carries the plain spec fields', () => {
    const config = buildRunConfig(
      makeInputs({
        remoteUrl: REMOTE,
        transport: 'sse',
        proxyPort: 9090,
        trustProxyHeaders: true,
        endpointPrefix: '/github',
        groupRef: { name: 'tools' },
        audit: { enabled: true },
      }),
    );
    expect(config).toMatchObject({
      transport: 'sse',
      proxy_mode: 'sse',
      port: 9090,
      trust_proxy_headers: true,
      endpoint_prefix: '/github',
      group: 'tools',
      audit_config: {},
    });
  });

  it('leaves audit off when audit.enabled is false', () => {
    expect(
      buildRunConfig(makeInputs({ remoteUrl: REMOTE, audit: { enabled: false } })).audit_config,
    ).toBeUndefined();
  });

  it('names secrets and never holds their values', () => {
    const config = buildRunConfig(
      makeInputs(
        {
          remoteUrl: REMOTE,
          headerForward: {
            addPlaintextHeaders: { 'X-Tenant': 'a' },
            addHeadersFromSecret: [
              { headerName: 'X-Api-Key', valueSecretRef: { name: 'keys', key: 'api' } },
              { headerName: 'X-Other', valueSecretRef: { name: 'keys', key: 'other' } },
            ],
          },
        },
        {
          externalAuthConfig: external({
            type: 'bearerToken',
            bearerToken: { tokenSecretRef: { name: 'tok', key: 't' } },
          }),
        },
      ),
    );
    expect(config.header_forward).toEqual({
      add_plaintext_headers: { 'X-Tenant': 'a' },
      add_headers_from_secret: { 'X-Api-Key': 'HEADER_FORWARD_0', 'X-Other': 'HEADER_FORWARD_1' },
    });
    expect(config.remote_auth_config).toEqual({ bearer_token: 'REMOTE_BEARER_TOKEN,target=bearer_token' });
    expect(JSON.stringify(config)).not.toMatch(/"keys"|"tok"/);
  });

  it('maps a headerInjection external auth config onto the forwarded headers', () => {
    const config = buildRunConfig(
      makeInputs(
        { remoteUrl: REMOTE },
        {
          externalAuthConfig: external({
            type: 'headerInjection',
            headerInjection: { headerName: 'X-Auth', valueSecretRef: { name: 's', key: 'k' } },
          }),
        },
      ),
    );
    expect(config.header_forward).toEqual({ add_headers_from_secret: { 'X-Auth': 'EXTERNAL_AUTH_HEADER' } });
  });

  it.each([
    [
      'replace',
      { tokenUrl: 'https://sts.example.com/token', audience: 'api' },
      {
        token_url: 'https://sts.example.com/token',
        audience: 'api',
        subject_token_type: 'access_token',
        header_strategy: 'replace',
      },
    ],
    [
      'custom header, client secret and scopes',
      {
        tokenUrl: 'https://sts.example.com/token',
        clientId: 'proxy',
        clientSecretRef: { name: 'sts', key: 'secret' },
        scopes: ['read', 'write'],
        subjectTokenType: 'id_token' as const,
        externalTokenHeaderName: 'X-Upstream-Token',
      },
      {
        token_url: 'https://sts.example.com/token',
        client_id: 'proxy',
        client_secret: 'TOKEN_EXCHANGE_CLIENT_SECRET,target=token_exchange_client_secret',
        scopes: ['read', 'write'],
        subject_token_type: 'id_token',
        header_strategy: 'custom',
        external_token_header_name: 'X-Upstream-Token',
      },
    ],
  ])('token exchange: %s', (_name, tokenExchange, expected) => {
    const config = buildRunConfig(
      makeInputs(
        { remoteUrl: REMOTE },
        { externalAuthConfig: external({ type: 'tokenExchange', tokenExchange }) },
      ),
    );
    expect(config.token_exchange_config).toEqual(expected);
  });

  it('adds nothing for an unauthenticated external auth config', () => {
    const config = buildRunConfig(
      makeInputs({ remoteUrl: REMOTE }, { externalAuthConfig: external({ type: 'unauthenticated' }) }),
    );
    expect(config.remote_auth_config).toBeUndefined();
    expect(config.token_exchange_config).toBeUndefined();
    expect(config.header_forward).toBeUndefined();
  });

  it('builds oidc_config from an inline MCPOIDCConfig and the per-proxy reference', () => {
    const config = buildRunConfig(
      makeInputs(
        {
          remoteUrl: REMOTE,
          proxyPort: 9000,
          oidcConfigRef: { name: 'idp', audience: 'github-proxy', scopes: ['mcp'] },
        },
        {
          oidcConfig: oidc({
            type: 'inline',
            inline: {
              issuer: 'https://idp.example.com',
              jwksUrl: 'https://idp.example.com/jwks',
              introspectionUrl: 'https://idp.example.com/introspect',
              clientId: 'moat',
              clientSecretRef: { name: 'idp', key: 'secret' },
              caBundleRef: { name: 'idp-ca' },
              jwksAllowPrivateIP: true,
            },
          }),
        },
      ),
    );
    expect(config.oidc_config).toEqual({
      Issuer: 'https://idp.example.com',
      JWKSURL: 'https://idp.example.com/jwks',
      IntrospectionURL: 'https://idp.example.com/introspect',
      ClientID: 'moat',
      ClientSecret: 'OIDC_CLIENT_SECRET,target=oidc_client_secret',
      CACertPath: '/etc/moat/oidc-ca/ca.crt',
      AllowPrivateIP: true,
      Audience: 'github-proxy',
      // The real Service name and the current port (ToolHive used the CR name).
      ResourceURL: 'http://mcp-github-remote-proxy.team-a.svc.cluster.local:9000',
      Scopes: ['mcp'],
    });
  });

  it('prefers the reference resourceUrl and uses cluster auth for service-account tokens', () => {
    const config = buildRunConfig(
      makeInputs(
        {
          remoteUrl: REMOTE,
          oidcConfigRef: { name: 'idp', audience: 'a', resourceUrl: 'https://mcp.corp.example/github' },
        },
        { oidcConfig: oidc({ type: 'kubernetesServiceAccount', kubernetesServiceAccount: {} }) },
      ),
    );
    expect(config.oidc_config).toEqual({
      Issuer: 'https://kubernetes.default.svc',
      CACertPath: '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt',
      AuthTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
      AllowPrivateIP: true,
      Audience: 'a',
      ResourceURL: 'https://mcp.corp.example/github',
    });
  });

  it('does not use cluster auth when useClusterAuth is false', () => {
    const config = buildRunConfig(
      makeInputs(
        { remoteUrl: REMOTE, oidcConfigRef: { name: 'idp', audience: 'a' } },
        {
          oidcConfig: oidc({
            type: 'kubernetesServiceAccount',
            kubernetesServiceAccount: { issuer: 'https://oidc.eks.example.com/id/X', useClusterAuth: false },
          }),
        },
      ),
    );
    expect(config.oidc_config).toEqual({
      Issuer: 'https://oidc.eks.example.com/id/X',
      Audience: 'a',
      ResourceURL: 'http://mcp-github-remote-proxy.team-a.svc.cluster.local:8080',
    });
  });

  it.each([
    [
      'inline',
      {
        authzConfig: {
          type: 'inline' as const,
          inline: { policies: ['permit(principal, action, resource);'], primaryUpstreamProvider: 'github' },
          groupClaimName: 'grp',
        },
      },
      {},
      { policies: ['permit(principal, action, resource);'], entities_json: '[]', group_claim_name: 'grp' },
    ],
    [
      'configMap, with claim overrides from the spec',
      { authzConfig: { type: 'configMap' as const, configMap: { name: 'authz' }, roleClaimName: 'roles2' } },
      {
        configMaps: {
          authz: {
            data: {
              'authz.json': JSON.stringify({
                version: '1.0',
                type: 'cedarv1',
                cedar: { policies: ['forbid(principal, action, resource);'], role_claim_name: 'r' },
              }),
            },
          },
        },
      },
      { policies: ['forbid(principal, action, resource);'], role_claim_name: 'roles2' },
    ],
    [
      'MCPAuthzConfig reference',
      { authzConfigRef: { name: 'shared' } },
      {
        authzConfig: makeConfig('MCPAuthzConfig', mcpAuthzConfigSpecSchema, 'shared', {
          policies: ['permit(principal, action, resource);'],
          groupEntityType: 'Team',
        }),
      },
      { policies: ['permit(principal, action, resource);'], entities_json: '[]', group_entity_type: 'Team' },
    ],
  ])('authz_config from %s', (_name, spec, extra, cedar) => {
    const config = buildRunConfig(makeInputs({ remoteUrl: REMOTE, ...spec }, extra));
    expect(config.authz_config).toEqual({ version: '1.0', type: 'cedarv1', cedar });
  });

  it('takes the argument mapping from the proxy or the MCPAuthzConfig it references (strict unless lossy)', () => {
    const policies = ['permit(principal, action, resource);'];
    const own = (argumentMapping?: 'strict' | 'lossy') =>
      buildRunConfig(
        makeInputs({
          remoteUrl: REMOTE,
          authzConfig: { type: 'inline' as const, inline: { policies }, argumentMapping },
        }),
      ).authz_argument_mapping;
    expect([own(), own('strict'), own('lossy')]).toEqual([undefined, undefined, 'lossy']);
    const shared = buildRunConfig(
      makeInputs(
        { remoteUrl: REMOTE, authzConfigRef: { name: 'shared' } },
        {
          authzConfig: makeConfig('MCPAuthzConfig', mcpAuthzConfigSpecSchema, 'shared', {
            policies,
            argumentMapping: 'lossy',
          }),
        },
      ),
    );
    expect(shared.authz_argument_mapping).toBe('lossy');
  });

  it('copies the tool filter and overrides', () => {
    const config = buildRunConfig(
      makeInputs(
        { remoteUrl: REMOTE, toolConfigRef: { name: 'tools' } },
        {
          toolConfig: makeConfig('MCPToolConfig', mcpToolConfigSpecSchema, 'tools', {
            toolsFilter: ['search', 'fetch'],
            toolsOverride: { fetch: { name: 'get_page', description: 'Fetch a page' } },
          }),
        },
      ),
    );
    expect(config.tools_filter).toEqual(['search', 'fetch']);
    expect(config.tools_override).toEqual({ fetch: { name: 'get_page', description: 'Fetch a page' } });
  });

  it('maps the telemetry config, with the service name from the reference', () => {
    const telemetry = makeConfig('MCPTelemetryConfig', mcpTelemetryConfigSpecSchema, 'otel', {
      openTelemetry: {
        endpoint: 'https://otel.example.com:4318',
        headers: { 'x-team': 'a' },
        resourceAttributes: { env: 'prod' },
        tracing: { enabled: true, samplingRate: 0.25 },
        metrics: { enabled: true },
        caBundleRef: { name: 'otel-ca', key: 'root.pem' },
      },
      prometheus: { enabled: true },
    });
    const withName = buildRunConfig(
      makeInputs(
        { remoteUrl: REMOTE, telemetryConfigRef: { name: 'otel', serviceName: 'gh' } },
        { telemetryConfig: telemetry },
      ),
    );
    expect(withName.telemetry_config).toEqual({
      serviceName: 'gh',
      endpoint: 'otel.example.com:4318',
      protocol: 'http',
      insecure: false,
      useLegacyAttributes: false,
      tracingEnabled: true,
      metricsEnabled: true,
      samplingRate: '0.25',
      headers: { 'x-team': 'a' },
      customAttributes: { env: 'prod' },
      caCertPath: '/etc/moat/otel-ca/ca.crt',
      enablePrometheusMetricsPath: true,
    });
    const defaultName = buildRunConfig(
      makeInputs({ remoteUrl: REMOTE, telemetryConfigRef: { name: 'otel' } }, { telemetryConfig: telemetry }),
    );
    expect(defaultName.telemetry_config?.serviceName).toBe('moat-github');
  });

  it('maps the OTLP protocol name onto the RunConfig value', () => {
    const grpc = makeConfig('MCPTelemetryConfig', mcpTelemetryConfigSpecSchema, 'otel', {
      openTelemetry: { endpoint: 'otel.example.com:4317', protocol: 'grpc', tracing: { enabled: true } },
    });
    const config = buildRunConfig(
      makeInputs({ remoteUrl: REMOTE, telemetryConfigRef: { name: 'otel' } }, { telemetryConfig: grpc }),
    );
    expect(config.telemetry_config).toMatchObject({ endpoint: 'otel.example.com:4317', protocol: 'grpc' });
    expect(() =>
      mcpTelemetryConfigSpecSchema.parse({ openTelemetry: { protocol: 'http/protobuf' } }),
    ).toThrow(/http\/json.*grpc/);
  });

  it.each([
    ['memory: no Redis section', { provider: 'memory' as const }, undefined],
    [
      'redis, plaintext',
      {
        provider: 'redis' as const,
        address: 'redis:6379',
        db: 2,
        keyPrefix: 'gh:',
        passwordRef: { name: 'r', key: 'p' },
      },
      { session_redis: { address: 'redis:6379', db: 2, key_prefix: 'gh:' } },
    ],
    [
      'redis with a command timeout',
      { provider: 'redis' as const, address: 'redis:6379', commandTimeout: '500ms' },
      { session_redis: { address: 'redis:6379', db: 0, command_timeout: '500ms' } },
    ],
    [
      'redis, TLS with a CA',
      {
        provider: 'redis' as const,
        address: 'redis:6380',
        tls: { caCertSecretRef: { name: 'ca', key: 'tls.crt' } },
      },
      { session_redis: { address: 'redis:6380', db: 0, tls: { ca_cert_file: '/etc/moat/redis-ca/ca.crt' } } },
    ],
    [
      'redis, TLS against system roots',
      { provider: 'redis' as const, address: 'redis:6380', tls: {} },
      { session_redis: { address: 'redis:6380', db: 0, tls: {} } },
    ],
    [
      'redis, TLS without verification',
      { provider: 'redis' as const, address: 'redis:6380', tls: { insecureSkipVerify: true } },
      { session_redis: { address: 'redis:6380', db: 0, tls: { insecure_skip_verify: true } } },
    ],
  ])('session storage %s', (_name, sessionStorage, expected) => {
    const config = buildRunConfig(makeInputs({ remoteUrl: REMOTE, sessionStorage }));
    expect(config.scaling_config).toEqual(expected);
  });
});

describe('upstream timeout', () => {
  it('maps spec.upstreamTimeout to upstream_timeout; unset leaves the proxy default', () => {
    const config = buildRunConfig(makeInputs({ remoteUrl: REMOTE, upstreamTimeout: '90s' }));
    expect(config.upstream_timeout).toBe('90s');
    expect(buildRunConfig(makeInputs({ remoteUrl: REMOTE })).upstream_timeout).toBeUndefined();
  });
});

describe('rate limits', () => {
  it('maps spec.rateLimit to the RunConfig, failing closed unless told otherwise', () => {
    const config = buildRunConfig(
      makeInputs({
        remoteUrl: REMOTE,
        rateLimit: {
          perPrincipal: { requestsPerMinute: 600, burst: 50 },
          tools: { deploy: { requestsPerMinute: 2 } },
          onStoreFailure: 'deny',
        },
      }),
    );
    expect(config.rate_limit).toEqual({
      per_principal: { requests_per_minute: 600, burst: 50 },
      tools: { deploy: { requests_per_minute: 2 } },
      on_store_failure: 'deny',
    });
    expect(buildRunConfig(makeInputs({ remoteUrl: REMOTE })).rate_limit).toBeUndefined();
  });
});

describe('tool pinning', () => {
  it('is off by default and kept in pod memory (or the session Redis) when on', () => {
    expect(buildRunConfig(makeInputs({ remoteUrl: REMOTE })).tool_pinning).toBeUndefined();
    expect(buildRunConfig(makeInputs({ remoteUrl: REMOTE, toolPinning: 'enforce' })).tool_pinning).toEqual({
      mode: 'enforce',
      store: 'memory',
    });
  });
});

describe('guardrails', () => {
  it('are off by default and become the guardrail config, in the file format, when set', () => {
    expect(buildRunConfig(makeInputs({ remoteUrl: REMOTE })).guardrail_config).toBeUndefined();
    const guardrails = { toClient: 'warn' as const, detectors: { email: { toServer: 'redact' as const } } };
    expect(buildRunConfig(makeInputs({ remoteUrl: REMOTE, guardrails })).guardrail_config).toEqual({
      to_client: 'warn',
      detectors: { email: { to_server: 'redact' } },
    });
  });

  it('refuse a detector the proxy does not have, naming the field', () => {
    const guardrails = { detectors: { 'aws-key': { toServer: 'block' as const } } };
    expect(() => buildRunConfig(makeInputs({ remoteUrl: REMOTE, guardrails }))).toThrow(
      /spec.guardrails: field detectors.aws-key: unknown detector/,
    );
  });
});
