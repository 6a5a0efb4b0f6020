/**
 * The generated CRDs on the real API server: they install, and the server accepts or rejects objects exactly as
 * spec §2.2 and §8 say (every enum, pattern, length, range, required field and CEL rule, both sides), applies the
 * defaults, and keeps status behind its subresource. Each row is also parsed with the zod schema the CRD was
 * generated from, so the TypeScript side and the API server cannot disagree.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ApiextensionsV1Api } from '@kubernetes/client-node';
import {
  ALL_KINDS,
  mcpAuthzConfigKind,
  mcpExternalAuthConfigKind,
  mcpGroupKind,
  mcpOidcConfigKind,
  mcpRemoteProxyKind,
  mcpTelemetryConfigKind,
  mcpToolConfigKind,
  mcpRemoteProxySpecSchema,
  mcpRemoteProxyStatusSchema,
  type KindDefinition,
} from '../../../src/operator/crd/index.js';
import { kubeConfig } from '../../support/kube-cluster.js';
import { installCrds } from '../../support/operator-crds.js';
import { CustomObjects, type StoredObject } from '../../support/custom-objects.js';

const kc = kubeConfig();
const objects = new CustomObjects(kc, `crds-${Date.now()}`);
const created: { kind: KindDefinition; name: string }[] = [];

beforeAll(async () => {
  await installCrds(kc);
  await objects.createNamespace();
}, 90_000);

afterAll(async () => {
  for (const { kind, name } of created) await objects.delete(kind, name);
});

type Spec = Record<string, unknown>;
/** A rejected row: the field path the server names, and a fragment of what it says is allowed. */
type Rejection = [field: string, says: string | RegExp];
interface Row {
  name: string;
  spec: Spec;
  rejected?: Rejection;
}

const URL_ = 'https://mcp.example.com/mcp';
const a = (n: number) => 'a'.repeat(n);
const proxy = (extra: Spec): Spec => ({ remoteUrl: URL_, ...extra });
const redis = (extra: Spec = {}): Spec =>
  proxy({ sessionStorage: { provider: 'redis', address: 'redis:6379', ...extra } });
const secretRef = { name: 's', key: 'k' };
const overrides = (proxyDeployment: Spec): Spec => proxy({ resourceOverrides: { proxyDeployment } });
const nodeRequirement = (requirement: Spec): Spec =>
  overrides({
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [requirement] }],
        },
      },
    },
  });
const nodeWeight = (weight: number): Spec =>
  overrides({
    affinity: {
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight, preference: { matchExpressions: [{ key: 'zone', operator: 'Exists' }] } },
        ],
      },
    },
  });
const podTerm = (term: Spec): Spec =>
  overrides({
    affinity: {
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone', ...term }] },
    },
  });
const podWeight = (weight: number): Spec =>
  overrides({
    affinity: {
      podAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight, podAffinityTerm: { topologyKey: 'zone', labelSelector: { matchLabels: { app: 'x' } } } },
        ],
      },
    },
  });
const toleration = (t: Spec): Spec => overrides({ tolerations: [t] });
const inline = (extra: Spec = {}): Spec =>
  proxy({
    authzConfig: { type: 'inline', inline: { policies: ['permit(principal, action, resource);'], ...extra } },
  });
const claims = (extra: Spec): Spec => proxy({ authzConfig: { configMap: { name: 'authz' }, ...extra } });
const secretHeader = (headerName: string): Spec =>
  proxy({ headerForward: { addHeadersFromSecret: [{ headerName, valueSecretRef: secretRef }] } });

const proxyRows: Row[] = [
  // remoteUrl, transport, port, replicas, affinity
  { name: 'minimal', spec: proxy({}) },
  { name: 'no remoteUrl', spec: {}, rejected: ['spec.remoteUrl', 'Required value'] },
  {
    name: 'remoteUrl not http(s)',
    spec: { remoteUrl: 'ftp://x' },
    rejected: ['spec.remoteUrl', 'should match'],
  },
  { name: 'http remoteUrl', spec: { remoteUrl: 'http://remote.example.com' } },
  {
    name: 'proxyPort 0',
    spec: proxy({ proxyPort: 0 }),
    rejected: ['spec.proxyPort', 'greater than or equal to 1'],
  },
  { name: 'proxyPort 1', spec: proxy({ proxyPort: 1 }) },
  { name: 'proxyPort 65535', spec: proxy({ proxyPort: 65535 }) },
  {
    name: 'proxyPort 65536',
    spec: proxy({ proxyPort: 65536 }),
    rejected: ['spec.proxyPort', 'less than or equal to 65535'],
  },
  { name: 'transport sse', spec: proxy({ transport: 'sse' }) },
  {
    name: 'transport stdio',
    spec: proxy({ transport: 'stdio' }),
    rejected: ['spec.transport', '"streamable-http"'],
  },
  { name: 'sessionAffinity None', spec: proxy({ sessionAffinity: 'None' }) },
  {
    name: 'sessionAffinity Sticky',
    spec: proxy({ sessionAffinity: 'Sticky' }),
    rejected: ['spec.sessionAffinity', '"ClientIP"'],
  },
  { name: 'replicas 0', spec: proxy({ replicas: 0 }) },
  {
    name: 'replicas -1',
    spec: proxy({ replicas: -1 }),
    rejected: ['spec.replicas', 'greater than or equal to 0'],
  },
  // sessionStorage
  { name: 'memory storage', spec: proxy({ sessionStorage: { provider: 'memory' } }) },
  {
    name: 'storage without provider',
    spec: proxy({ sessionStorage: {} }),
    rejected: ['spec.sessionStorage.provider', 'Required value'],
  },
  {
    name: 'storage provider etcd',
    spec: proxy({ sessionStorage: { provider: 'etcd' } }),
    rejected: ['spec.sessionStorage.provider', '"redis"'],
  },
  { name: 'redis with address', spec: redis({ db: 3, keyPrefix: 'moat:', passwordRef: secretRef }) },
  {
    name: 'redis without address',
    spec: proxy({ sessionStorage: { provider: 'redis' } }),
    rejected: ['spec.sessionStorage.address', "address is required when provider is 'redis'"],
  },
  {
    name: 'redis empty address',
    spec: redis({ address: '' }),
    rejected: ['spec.sessionStorage.address', 'at least 1 chars'],
  },
  {
    name: 'db -1',
    spec: redis({ db: -1 }),
    rejected: ['spec.sessionStorage.db', 'greater than or equal to 0'],
  },
  { name: 'redis tls {}', spec: redis({ tls: {} }) },
  { name: 'redis tls CA', spec: redis({ tls: { caCertSecretRef: secretRef, insecureSkipVerify: false } }) },
  { name: 'redis tls insecure', spec: redis({ tls: { insecureSkipVerify: true } }) },
  {
    name: 'redis tls CA and insecure',
    spec: redis({ tls: { caCertSecretRef: secretRef, insecureSkipVerify: true } }),
    rejected: ['spec.sessionStorage.tls.insecureSkipVerify', 'cannot be combined'],
  },
  {
    name: 'memory with tls',
    spec: proxy({ sessionStorage: { provider: 'memory', tls: {} } }),
    rejected: ['spec.sessionStorage.tls', "tls is allowed only when provider is 'redis'"],
  },
  {
    name: 'memory with address',
    spec: proxy({ sessionStorage: { provider: 'memory', address: 'r:6379' } }),
    rejected: ['spec.sessionStorage', "allowed only when provider is 'redis'"],
  },
  { name: 'redis commandTimeout', spec: redis({ commandTimeout: '500ms' }) },
  {
    name: 'redis commandTimeout 0s',
    spec: redis({ commandTimeout: '0s' }),
    rejected: ['spec.sessionStorage.commandTimeout', 'must be a positive duration'],
  },
  {
    name: 'redis commandTimeout not a duration',
    spec: redis({ commandTimeout: '2 seconds' }),
    rejected: ['spec.sessionStorage.commandTimeout', 'should match'],
  },
  {
    name: 'memory with commandTimeout',
    spec: proxy({ sessionStorage: { provider: 'memory', commandTimeout: '1s' } }),
    rejected: ['spec.sessionStorage.commandTimeout', "allowed only when provider is 'redis'"],
  },
  { name: 'upstreamTimeout', spec: proxy({ upstreamTimeout: '1m30s' }) },
  {
    name: 'upstreamTimeout 0s',
    spec: proxy({ upstreamTimeout: '0s' }),
    rejected: ['spec.upstreamTimeout', 'must be a positive duration'],
  },
  {
    name: 'passwordRef without key',
    spec: redis({ passwordRef: { name: 's' } }),
    rejected: ['spec.sessionStorage.passwordRef.key', 'Required value'],
  },
  // authz
  { name: 'authz configMap', spec: claims({}) },
  { name: 'authz inline', spec: inline() },
  { name: 'authzConfigRef', spec: proxy({ authzConfigRef: { name: 'shared' } }) },
  {
    name: 'authzConfig and authzConfigRef',
    spec: proxy({ authzConfig: { configMap: { name: 'a' } }, authzConfigRef: { name: 'b' } }),
    rejected: ['spec.authzConfigRef', 'mutually exclusive'],
  },
  {
    name: 'authz configMap type without configMap',
    spec: proxy({ authzConfig: { type: 'configMap' } }),
    rejected: ['spec.authzConfig.configMap', "configMap must be set when type is 'configMap'"],
  },
  {
    name: 'authz inline type without inline',
    spec: proxy({ authzConfig: { type: 'inline' } }),
    rejected: ['spec.authzConfig.inline', "inline must be set when type is 'inline'"],
  },
  {
    name: 'authz configMap type with inline',
    spec: proxy({ authzConfig: { configMap: { name: 'a' }, inline: { policies: ['x'] } } }),
    rejected: ['spec.authzConfig.inline', 'must not be set otherwise'],
  },
  {
    name: 'authz inline type with configMap',
    spec: proxy({ authzConfig: { type: 'inline', inline: { policies: ['x'] }, configMap: { name: 'a' } } }),
    rejected: ['spec.authzConfig.configMap', 'must not be set otherwise'],
  },
  {
    name: 'authz type bad',
    spec: proxy({ authzConfig: { type: 'opa' } }),
    rejected: ['spec.authzConfig.type', '"inline"'],
  },
  {
    name: 'inline without policies',
    spec: proxy({ authzConfig: { type: 'inline', inline: {} } }),
    rejected: ['spec.authzConfig.inline.policies', 'Required value'],
  },
  {
    name: 'inline empty policies',
    spec: inline({ policies: [] }),
    rejected: ['spec.authzConfig.inline.policies', 'at least 1 items'],
  },
  { name: 'groupClaimName 253', spec: claims({ groupClaimName: a(253), roleClaimName: a(253) }) },
  {
    name: 'groupClaimName 254',
    spec: claims({ groupClaimName: a(254) }),
    rejected: ['spec.authzConfig.groupClaimName', 'Too long'],
  },
  {
    name: 'roleClaimName 254',
    spec: claims({ roleClaimName: a(254) }),
    rejected: ['spec.authzConfig.roleClaimName', 'Too long'],
  },
  { name: 'groupEntityType 63', spec: claims({ groupEntityType: `_${a(62)}` }) },
  {
    name: 'groupEntityType 64',
    spec: claims({ groupEntityType: a(64) }),
    rejected: ['spec.authzConfig.groupEntityType', 'Too long'],
  },
  {
    name: 'groupEntityType namespaced',
    spec: claims({ groupEntityType: 'Foo::Bar' }),
    rejected: ['spec.authzConfig.groupEntityType', 'should match'],
  },
  {
    name: 'groupEntityType leading digit',
    spec: claims({ groupEntityType: '1Group' }),
    rejected: ['spec.authzConfig.groupEntityType', 'should match'],
  },
  { name: 'primaryUpstreamProvider', spec: inline({ primaryUpstreamProvider: 'okta-prod' }) },
  { name: 'primaryUpstreamProvider 63', spec: inline({ primaryUpstreamProvider: a(63) }) },
  {
    name: 'primaryUpstreamProvider 64',
    spec: inline({ primaryUpstreamProvider: a(64) }),
    rejected: ['spec.authzConfig.inline.primaryUpstreamProvider', 'Too long'],
  },
  {
    name: 'primaryUpstreamProvider empty',
    spec: inline({ primaryUpstreamProvider: '' }),
    rejected: ['spec.authzConfig.inline.primaryUpstreamProvider', 'at least 1 chars'],
  },
  {
    name: 'primaryUpstreamProvider upper case',
    spec: inline({ primaryUpstreamProvider: 'Okta' }),
    rejected: ['spec.authzConfig.inline.primaryUpstreamProvider', 'should match'],
  },
  {
    name: 'primaryUpstreamProvider trailing dash',
    spec: inline({ primaryUpstreamProvider: 'okta-' }),
    rejected: ['spec.authzConfig.inline.primaryUpstreamProvider', 'should match'],
  },
  // references
  {
    name: 'every reference',
    spec: proxy({
      oidcConfigRef: {
        name: 'o',
        audience: 'aud',
        scopes: ['openid'],
        resourceUrl: 'https://public.example.com/mcp',
      },
      authServerRef: { name: 'as' },
      externalAuthConfigRef: { name: 'e' },
      groupRef: { name: 'g' },
      telemetryConfigRef: { name: 't', serviceName: 'svc' },
      toolConfigRef: { name: 'tc' },
    }),
  },
  {
    name: 'oidcConfigRef without audience',
    spec: proxy({ oidcConfigRef: { name: 'o' } }),
    rejected: ['spec.oidcConfigRef.audience', 'Required value'],
  },
  {
    name: 'oidcConfigRef empty audience',
    spec: proxy({ oidcConfigRef: { name: 'o', audience: '' } }),
    rejected: ['spec.oidcConfigRef.audience', 'at least 1 chars'],
  },
  {
    name: 'oidcConfigRef empty name',
    spec: proxy({ oidcConfigRef: { name: '', audience: 'a' } }),
    rejected: ['spec.oidcConfigRef.name', 'at least 1 chars'],
  },
  {
    name: 'authServerRef other kind',
    spec: proxy({ authServerRef: { kind: 'Secret', name: 'x' } }),
    rejected: ['spec.authServerRef.kind', '"MCPExternalAuthConfig"'],
  },
  {
    name: 'authServerRef empty name',
    spec: proxy({ authServerRef: { name: '' } }),
    rejected: ['spec.authServerRef.name', 'at least 1 chars'],
  },
  {
    name: 'authzConfigRef empty name',
    spec: proxy({ authzConfigRef: { name: '' } }),
    rejected: ['spec.authzConfigRef.name', 'at least 1 chars'],
  },
  {
    name: 'groupRef empty name',
    spec: proxy({ groupRef: { name: '' } }),
    rejected: ['spec.groupRef.name', 'at least 1 chars'],
  },
  {
    name: 'telemetryConfigRef empty name',
    spec: proxy({ telemetryConfigRef: { name: '' } }),
    rejected: ['spec.telemetryConfigRef.name', 'at least 1 chars'],
  },
  {
    name: 'toolConfigRef without name',
    spec: proxy({ toolConfigRef: {} }),
    rejected: ['spec.toolConfigRef.name', 'Required value'],
  },
  // headerForward
  {
    name: 'headers',
    spec: proxy({
      headerForward: {
        addPlaintextHeaders: { 'X-Tenant': 'a' },
        addHeadersFromSecret: [{ headerName: 'X-Api-Key', valueSecretRef: secretRef }],
      },
    }),
  },
  { name: 'headerName 1', spec: secretHeader('X') },
  { name: 'headerName 255', spec: secretHeader(a(255)) },
  {
    name: 'headerName empty',
    spec: secretHeader(''),
    rejected: ['spec.headerForward.addHeadersFromSecret[0].headerName', 'at least 1 chars'],
  },
  {
    name: 'headerName 256',
    spec: secretHeader(a(256)),
    rejected: ['spec.headerForward.addHeadersFromSecret[0].headerName', 'Too long'],
  },
  {
    name: 'headerName with space',
    spec: secretHeader('X Api'),
    rejected: ['spec.headerForward.addHeadersFromSecret[0].headerName', 'should match'],
  },
  {
    name: 'header without secret ref',
    spec: proxy({ headerForward: { addHeadersFromSecret: [{ headerName: 'X' }] } }),
    rejected: ['spec.headerForward.addHeadersFromSecret[0].valueSecretRef', 'Required value'],
  },
  {
    name: 'header both plaintext and secret',
    spec: proxy({
      headerForward: {
        addPlaintextHeaders: { 'X-A': 'v' },
        addHeadersFromSecret: [{ headerName: 'X-A', valueSecretRef: secretRef }],
      },
    }),
    rejected: ['spec.headerForward.addHeadersFromSecret', 'must not be in both'],
  },
  {
    name: 'duplicate secret header',
    spec: proxy({
      headerForward: {
        addHeadersFromSecret: [
          { headerName: 'X-A', valueSecretRef: secretRef },
          { headerName: 'X-A', valueSecretRef: secretRef },
        ],
      },
    }),
    rejected: ['spec.headerForward.addHeadersFromSecret[1]', 'Duplicate value'],
  },
  // resources and overrides
  {
    name: 'resources',
    spec: proxy({
      resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '0.1', memory: '64Mi' } },
    }),
  },
  {
    name: 'resources bad quantity',
    spec: proxy({ resources: { limits: { cpu: 'lots' } } }),
    rejected: ['spec.resources.limits.cpu', 'should match'],
  },
  {
    name: 'overrides',
    spec: proxy({
      resourceOverrides: {
        proxyService: { labels: { a: 'b' }, annotations: { c: 'd' } },
        proxyDeployment: {
          labels: { a: 'b' },
          annotations: { c: 'd' },
          podTemplateMetadataOverrides: { labels: { e: 'f' } },
          env: [{ name: 'MOAT_DEBUG', value: 'true' }],
          imagePullSecrets: [{ name: 'regcred' }],
          nodeSelector: { disk: 'ssd' },
        },
      },
    }),
  },
  {
    name: 'env without value',
    spec: overrides({ env: [{ name: 'A' }] }),
    rejected: ['spec.resourceOverrides.proxyDeployment.env[0].value', 'Required value'],
  },
  {
    name: 'env duplicate name',
    spec: overrides({
      env: [
        { name: 'A', value: '1' },
        { name: 'A', value: '2' },
      ],
    }),
    rejected: ['spec.resourceOverrides.proxyDeployment.env[1]', 'Duplicate value'],
  },
  {
    name: 'toleration',
    spec: toleration({ key: 'dedicated', operator: 'Equal', value: 'mcp', effect: 'NoSchedule' }),
  },
  { name: 'toleration Exists without key', spec: toleration({ operator: 'Exists' }) },
  {
    name: 'toleration NoExecute seconds',
    spec: toleration({ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }),
  },
  {
    name: 'toleration empty key with Equal',
    spec: toleration({ value: 'v' }),
    rejected: [
      'spec.resourceOverrides.proxyDeployment.tolerations[0].operator',
      'operator must be Exists when key is empty',
    ],
  },
  {
    name: 'toleration Exists with value',
    spec: toleration({ key: 'k', operator: 'Exists', value: 'v' }),
    rejected: [
      'spec.resourceOverrides.proxyDeployment.tolerations[0].value',
      'value must be empty when operator is Exists',
    ],
  },
  {
    name: 'toleration seconds without NoExecute',
    spec: toleration({ key: 'k', effect: 'NoSchedule', tolerationSeconds: 5 }),
    rejected: [
      'spec.resourceOverrides.proxyDeployment.tolerations[0].tolerationSeconds',
      'only with effect NoExecute',
    ],
  },
  {
    name: 'toleration bad effect',
    spec: toleration({ key: 'k', effect: 'Evict' }),
    rejected: ['spec.resourceOverrides.proxyDeployment.tolerations[0].effect', '"NoExecute"'],
  },
  {
    name: 'toleration bad operator',
    spec: toleration({ key: 'k', operator: 'Is' }),
    rejected: ['spec.resourceOverrides.proxyDeployment.tolerations[0].operator', '"Exists"'],
  },
  {
    name: 'node weight 0',
    spec: nodeWeight(0),
    rejected: ['preferredDuringSchedulingIgnoredDuringExecution[0].weight', 'greater than or equal to 1'],
  },
  { name: 'node weight 1', spec: nodeWeight(1) },
  { name: 'node weight 100', spec: nodeWeight(100) },
  {
    name: 'node weight 101',
    spec: nodeWeight(101),
    rejected: ['preferredDuringSchedulingIgnoredDuringExecution[0].weight', 'less than or equal to 100'],
  },
  {
    name: 'pod weight 0',
    spec: podWeight(0),
    rejected: [
      'podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight',
      'greater than or equal to 1',
    ],
  },
  { name: 'pod weight 100', spec: podWeight(100) },
  {
    name: 'pod weight 101',
    spec: podWeight(101),
    rejected: [
      'podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight',
      'less than or equal to 100',
    ],
  },
  { name: 'node In with values', spec: nodeRequirement({ key: 'zone', operator: 'In', values: ['a'] }) },
  {
    name: 'node In without values',
    spec: nodeRequirement({ key: 'zone', operator: 'In' }),
    rejected: ['matchExpressions[0].values', 'values must be non-empty when operator is In or NotIn'],
  },
  {
    name: 'node NotIn empty values',
    spec: nodeRequirement({ key: 'zone', operator: 'NotIn', values: [] }),
    rejected: ['matchExpressions[0].values', 'must be non-empty'],
  },
  { name: 'node Exists', spec: nodeRequirement({ key: 'zone', operator: 'DoesNotExist' }) },
  {
    name: 'node Exists with values',
    spec: nodeRequirement({ key: 'zone', operator: 'Exists', values: ['a'] }),
    rejected: ['matchExpressions[0].values', 'values must be empty when operator is Exists or DoesNotExist'],
  },
  { name: 'node Gt single integer', spec: nodeRequirement({ key: 'cpus', operator: 'Gt', values: ['4'] }) },
  {
    name: 'node Lt two values',
    spec: nodeRequirement({ key: 'cpus', operator: 'Lt', values: ['4', '5'] }),
    rejected: ['matchExpressions[0].values', 'single integer'],
  },
  {
    name: 'node Gt not a number',
    spec: nodeRequirement({ key: 'cpus', operator: 'Gt', values: ['four'] }),
    rejected: ['matchExpressions[0].values', 'single integer'],
  },
  {
    name: 'node bad operator',
    spec: nodeRequirement({ key: 'zone', operator: 'Near' }),
    rejected: ['matchExpressions[0].operator', '"DoesNotExist"'],
  },
  {
    name: 'nodeSelectorTerms required',
    spec: overrides({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: {} } } }),
    rejected: ['nodeSelectorTerms', 'Required value'],
  },
  {
    name: 'pod term',
    spec: podTerm({
      labelSelector: {
        matchLabels: { app: 'moat' },
        matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }],
      },
      matchLabelKeys: ['rev'],
      mismatchLabelKeys: ['team'],
      namespaces: ['x'],
      namespaceSelector: {},
    }),
  },
  {
    name: 'pod term empty topologyKey',
    spec: podTerm({ topologyKey: '' }),
    rejected: ['topologyKey', 'at least 1 chars'],
  },
  {
    name: 'pod term without topologyKey',
    spec: overrides({ affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{}] } } }),
    rejected: ['requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey', 'Required value'],
  },
  {
    name: 'matchLabelKeys without labelSelector',
    spec: podTerm({ matchLabelKeys: ['rev'] }),
    rejected: [
      'requiredDuringSchedulingIgnoredDuringExecution[0]',
      'cannot be set when labelSelector is unset',
    ],
  },
  {
    name: 'mismatchLabelKeys without labelSelector',
    spec: podTerm({ mismatchLabelKeys: ['rev'] }),
    rejected: [
      'requiredDuringSchedulingIgnoredDuringExecution[0]',
      'cannot be set when labelSelector is unset',
    ],
  },
  {
    name: 'matchLabelKeys key in matchLabels',
    spec: podTerm({ labelSelector: { matchLabels: { rev: '1' } }, matchLabelKeys: ['rev'] }),
    rejected: ['matchLabelKeys', 'must not also appear in labelSelector'],
  },
  {
    name: 'mismatchLabelKeys key in matchExpressions',
    spec: podTerm({
      labelSelector: { matchExpressions: [{ key: 'rev', operator: 'Exists' }] },
      mismatchLabelKeys: ['rev'],
    }),
    rejected: ['mismatchLabelKeys', 'must not also appear in labelSelector'],
  },
  {
    name: 'key in both key lists',
    spec: podTerm({ labelSelector: {}, matchLabelKeys: ['rev'], mismatchLabelKeys: ['rev'] }),
    rejected: ['mismatchLabelKeys', 'both matchLabelKeys and mismatchLabelKeys'],
  },
  {
    name: 'label selector In without values',
    spec: podTerm({ labelSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } }),
    rejected: ['labelSelector.matchExpressions[0].values', 'must be non-empty'],
  },
  {
    name: 'label selector Exists with values',
    spec: podTerm({ labelSelector: { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] } }),
    rejected: ['labelSelector.matchExpressions[0].values', 'must be empty'],
  },
  {
    name: 'label selector Gt',
    spec: podTerm({ labelSelector: { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] } }),
    rejected: ['labelSelector.matchExpressions[0].operator', '"In"'],
  },
  {
    name: 'audit',
    spec: proxy({
      audit: { enabled: true },
      trustProxyHeaders: true,
      endpointPrefix: '/team',
      allowPrivateEndpoint: true,
      serviceAccount: 'mine',
    }),
  },
];

/** Runs one row against the API server and the zod schema, and checks both agree with the row. */
async function check(
  kind: KindDefinition,
  row: Row,
  body: (spec: Spec) => Record<string, unknown> = (spec) => ({ spec }),
) {
  const outcome = await objects.create(kind, body(row.spec));
  const parsed = kind.spec.safeParse(row.spec);
  if (outcome.ok) created.push({ kind, name: outcome.object.metadata.name });
  if (!row.rejected) {
    expect(outcome.ok ? 'accepted' : outcome.message).toBe('accepted');
    expect(parsed.error?.issues ?? []).toEqual([]);
    return;
  }
  const [field, says] = row.rejected;
  expect(outcome.ok, 'the API server accepted it').toBe(false);
  if (outcome.ok) return;
  expect(outcome.code).toBe(422);
  expect(outcome.message).toContain(field);
  if (typeof says === 'string') expect(outcome.message).toContain(says);
  else expect(outcome.message).toMatch(says);
  expect(parsed.success, 'the zod schema accepted what the API server rejected').toBe(false);
}

describe('generated CRDs on the API server', () => {
  it('are stored with short names, categories, printer columns, status subresource and CEL rules', async () => {
    const api = kc.makeApiClient(ApiextensionsV1Api);
    for (const kind of ALL_KINDS) {
      const crd = await api.readCustomResourceDefinition({ name: `${kind.plural}.moat.dev` });
      expect(crd.spec.names.shortNames).toEqual(kind.shortNames);
      expect(crd.spec.names.categories).toEqual(['moat']);
      expect(crd.spec.scope).toBe('Namespaced');
      const version = crd.spec.versions[0]!;
      expect(version.name).toBe('v1beta1');
      expect(version.subresources?.status).toEqual({});
      expect(version.additionalPrinterColumns?.map((c) => c.name)).toEqual(
        kind.printerColumns.map((c) => c.name),
      );
    }
    const proxyCrd = await api.readCustomResourceDefinition({ name: 'mcpremoteproxies.moat.dev' });
    expect(proxyCrd.spec.names.shortNames).toEqual(['rp', 'mcprp']);
    expect(proxyCrd.spec.versions[0]!.additionalPrinterColumns?.map((c) => c.name)).toEqual([
      'Phase',
      'Remote URL',
      'URL',
      'Ready',
      'Age',
    ]);
    const spec = proxyCrd.spec.versions[0]!.schema!.openAPIV3Schema!.properties!.spec!;
    expect(spec.x_kubernetes_validations?.[0]?.rule).toBe(
      '!(has(self.authzConfig) && has(self.authzConfigRef))',
    );
    expect(spec.properties!.podTemplateSpec!.x_kubernetes_preserve_unknown_fields).toBe(true);
  });

  it('requires spec on MCPRemoteProxy, prunes unknown fields and keeps podTemplateSpec as written', async () => {
    const noSpec = await objects.create(mcpRemoteProxyKind, {});
    expect(noSpec.ok ? 'accepted' : noSpec.message).toContain('spec: Required value');
    const podTemplateSpec = {
      metadata: { labels: { a: 'b' } },
      spec: { priorityClassName: 'mcp', futureField: { x: 1 } },
    };
    const outcome = await objects.create(mcpRemoteProxyKind, {
      spec: { remoteUrl: URL_, unknownField: 'dropped', podTemplateSpec },
    });
    if (!outcome.ok) throw new Error(outcome.message);
    created.push({ kind: mcpRemoteProxyKind, name: outcome.object.metadata.name });
    expect(outcome.object.spec).not.toHaveProperty('unknownField');
    expect(outcome.object.spec?.podTemplateSpec).toEqual(podTemplateSpec);
  });

  it('installing twice is harmless', async () => {
    await expect(installCrds(kc)).resolves.toHaveLength(ALL_KINDS.length);
  }, 60_000);
});

describe('MCPRemoteProxy validation', () => {
  it.each(proxyRows.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
    await check(mcpRemoteProxyKind, row);
  });
});

const oidc = (extra: Spec) => ({ type: 'inline', inline: { issuer: 'https://idp.example.com', ...extra } });
const exchange = { tokenUrl: 'https://idp.example.com/token', audience: 'remote' };

const referencedRows: [KindDefinition, Row][] = [
  [
    mcpOidcConfigKind,
    {
      name: 'inline',
      spec: oidc({
        jwksUrl: 'https://idp.example.com/jwks',
        introspectionUrl: 'https://idp.example.com/introspect',
        clientId: 'moat',
        clientSecretRef: secretRef,
        caBundleRef: { name: 'ca' },
        jwksAllowPrivateIP: true,
      }),
    },
  ],
  [
    mcpOidcConfigKind,
    {
      name: 'service account',
      spec: { type: 'kubernetesServiceAccount', kubernetesServiceAccount: { useClusterAuth: false } },
    },
  ],
  [mcpOidcConfigKind, { name: 'service account, defaults', spec: { type: 'kubernetesServiceAccount' } }],
  [
    mcpOidcConfigKind,
    { name: 'no type', spec: { inline: { issuer: 'https://x' } }, rejected: ['spec.type', 'Required value'] },
  ],
  [mcpOidcConfigKind, { name: 'bad type', spec: { type: 'ldap' }, rejected: ['spec.type', '"inline"'] }],
  [
    mcpOidcConfigKind,
    {
      name: 'inline type without inline',
      spec: { type: 'inline' },
      rejected: ['spec', "inline must be set when type is 'inline'"],
    },
  ],
  [
    mcpOidcConfigKind,
    {
      name: 'inline with service-account type',
      spec: { type: 'kubernetesServiceAccount', inline: { issuer: 'https://x' } },
      rejected: ['spec', 'must not be set otherwise'],
    },
  ],
  [
    mcpOidcConfigKind,
    {
      name: 'service account block with inline type',
      spec: { ...oidc({}), kubernetesServiceAccount: {} },
      rejected: [
        'spec',
        "kubernetesServiceAccount must not be set unless type is 'kubernetesServiceAccount'",
      ],
    },
  ],
  [
    mcpOidcConfigKind,
    {
      name: 'inline without issuer',
      spec: { type: 'inline', inline: {} },
      rejected: ['spec.inline.issuer', 'Required value'],
    },
  ],
  [
    mcpOidcConfigKind,
    {
      name: 'http issuer',
      spec: oidc({ issuer: 'http://idp.local' }),
      rejected: ['spec.inline.issuer', 'issuer must be an https:// URL unless insecureAllowHTTP is true'],
    },
  ],
  [
    mcpOidcConfigKind,
    { name: 'http issuer allowed', spec: oidc({ issuer: 'http://idp.local', insecureAllowHTTP: true }) },
  ],
  [
    mcpOidcConfigKind,
    {
      name: 'http jwksUrl',
      spec: oidc({ jwksUrl: 'http://idp.local/jwks' }),
      rejected: ['spec.inline.jwksUrl', 'jwksUrl must be an https:// URL'],
    },
  ],
  [
    mcpOidcConfigKind,
    {
      name: 'http introspectionUrl',
      spec: oidc({ introspectionUrl: 'http://idp.local/i' }),
      rejected: ['spec.inline.introspectionUrl', 'introspectionUrl must be an https:// URL'],
    },
  ],
  [
    mcpOidcConfigKind,
    {
      name: 'issuer not a URL',
      spec: oidc({ issuer: 'idp.example.com' }),
      rejected: ['spec.inline.issuer', 'should match'],
    },
  ],
  [
    mcpOidcConfigKind,
    {
      name: 'client secret without client id',
      spec: oidc({ clientSecretRef: secretRef }),
      rejected: ['spec.inline.clientId', 'clientSecretRef requires clientId'],
    },
  ],
  [
    mcpAuthzConfigKind,
    {
      name: 'cedar',
      spec: {
        policies: ['permit(principal, action, resource);'],
        entitiesJson: '[]',
        groupClaimName: 'groups',
        roleClaimName: 'roles',
        groupEntityType: 'Team',
      },
    },
  ],
  [
    mcpAuthzConfigKind,
    { name: 'no policies', spec: { entitiesJson: '[]' }, rejected: ['spec.policies', 'Required value'] },
  ],
  [
    mcpAuthzConfigKind,
    { name: 'empty policies', spec: { policies: [] }, rejected: ['spec.policies', 'at least 1 items'] },
  ],
  [
    mcpAuthzConfigKind,
    { name: 'empty policy', spec: { policies: [''] }, rejected: ['spec.policies[0]', 'at least 1 chars'] },
  ],
  [
    mcpAuthzConfigKind,
    {
      name: 'bad entity type',
      spec: { policies: ['x'], groupEntityType: 'A::B' },
      rejected: ['spec.groupEntityType', 'should match'],
    },
  ],
  [
    mcpExternalAuthConfigKind,
    {
      name: 'token exchange',
      spec: {
        type: 'tokenExchange',
        tokenExchange: {
          ...exchange,
          clientId: 'c',
          clientSecretRef: secretRef,
          scopes: ['a'],
          subjectTokenType: 'id_token',
          externalTokenHeaderName: 'X-Upstream-Token',
        },
      },
    },
  ],
  [
    mcpExternalAuthConfigKind,
    { name: 'bearer token', spec: { type: 'bearerToken', bearerToken: { tokenSecretRef: secretRef } } },
  ],
  [
    mcpExternalAuthConfigKind,
    {
      name: 'header injection',
      spec: {
        type: 'headerInjection',
        headerInjection: { headerName: 'X-Api-Key', valueSecretRef: secretRef },
      },
    },
  ],
  [mcpExternalAuthConfigKind, { name: 'unauthenticated', spec: { type: 'unauthenticated' } }],
  [
    mcpExternalAuthConfigKind,
    {
      name: 'embedded auth server (not implemented)',
      spec: { type: 'embeddedAuthServer' },
      rejected: ['spec.type', '"tokenExchange"'],
    },
  ],
  [
    mcpExternalAuthConfigKind,
    {
      name: 'tokenExchange type without block',
      spec: { type: 'tokenExchange' },
      rejected: ['spec.tokenExchange', "tokenExchange must be set if and only if type is 'tokenExchange'"],
    },
  ],
  [
    mcpExternalAuthConfigKind,
    {
      name: 'unauthenticated with a block',
      spec: { type: 'unauthenticated', bearerToken: { tokenSecretRef: secretRef } },
      rejected: ['spec.bearerToken', "bearerToken must be set if and only if type is 'bearerToken'"],
    },
  ],
  [
    mcpExternalAuthConfigKind,
    {
      name: 'two blocks',
      spec: {
        type: 'bearerToken',
        bearerToken: { tokenSecretRef: secretRef },
        headerInjection: { headerName: 'X', valueSecretRef: secretRef },
      },
      rejected: ['spec.headerInjection', "if and only if type is 'headerInjection'"],
    },
  ],
  [
    mcpExternalAuthConfigKind,
    {
      name: 'token exchange without tokenUrl',
      spec: { type: 'tokenExchange', tokenExchange: { audience: 'a' } },
      rejected: ['spec.tokenExchange.tokenUrl', 'Required value'],
    },
  ],
  [
    mcpExternalAuthConfigKind,
    {
      name: 'bad subject token type',
      spec: { type: 'tokenExchange', tokenExchange: { ...exchange, subjectTokenType: 'saml' } },
      rejected: ['spec.tokenExchange.subjectTokenType', '"id_token"'],
    },
  ],
  [
    mcpExternalAuthConfigKind,
    {
      name: 'exchange secret without client id',
      spec: { type: 'tokenExchange', tokenExchange: { ...exchange, clientSecretRef: secretRef } },
      rejected: ['spec.tokenExchange.clientId', 'clientSecretRef requires clientId'],
    },
  ],
  [
    mcpExternalAuthConfigKind,
    {
      name: 'injected header 256',
      spec: { type: 'headerInjection', headerInjection: { headerName: a(256), valueSecretRef: secretRef } },
      rejected: ['spec.headerInjection.headerName', 'Too long'],
    },
  ],
  [
    mcpTelemetryConfigKind,
    {
      name: 'full',
      spec: {
        openTelemetry: {
          endpoint: 'otel-collector:4318',
          insecure: true,
          headers: { 'x-team': 'a' },
          resourceAttributes: { env: 'prod' },
          tracing: { enabled: true, samplingRate: 1 },
          metrics: { enabled: true },
        },
        prometheus: { enabled: true },
      },
    },
  ],
  [mcpTelemetryConfigKind, { name: 'prometheus only', spec: { prometheus: { enabled: true } } }],
  [
    mcpTelemetryConfigKind,
    {
      name: 'tracing without endpoint',
      spec: { openTelemetry: { tracing: { enabled: true } } },
      rejected: ['spec.openTelemetry.endpoint', 'endpoint is required when tracing or metrics is enabled'],
    },
  ],
  [
    mcpTelemetryConfigKind,
    {
      name: 'metrics without endpoint',
      spec: { openTelemetry: { metrics: { enabled: true } } },
      rejected: ['spec.openTelemetry.endpoint', 'endpoint is required'],
    },
  ],
  [
    mcpTelemetryConfigKind,
    {
      name: 'sampling 0',
      spec: { openTelemetry: { endpoint: 'c:4318', tracing: { enabled: true, samplingRate: 0 } } },
    },
  ],
  [
    mcpTelemetryConfigKind,
    {
      name: 'sampling 1.5',
      spec: { openTelemetry: { endpoint: 'c:4318', tracing: { enabled: true, samplingRate: 1.5 } } },
      rejected: ['spec.openTelemetry.tracing.samplingRate', 'less than or equal to 1'],
    },
  ],
  [
    mcpTelemetryConfigKind,
    {
      name: 'sampling -0.1',
      spec: { openTelemetry: { endpoint: 'c:4318', tracing: { enabled: true, samplingRate: -0.1 } } },
      rejected: ['spec.openTelemetry.tracing.samplingRate', 'greater than or equal to 0'],
    },
  ],
  [
    mcpTelemetryConfigKind,
    {
      name: 'CA with insecure',
      spec: { openTelemetry: { endpoint: 'c:4318', insecure: true, caBundleRef: { name: 'ca' } } },
      rejected: ['spec.openTelemetry.caBundleRef', 'caBundleRef cannot be combined with insecure: true'],
    },
  ],
  [
    mcpToolConfigKind,
    {
      name: 'filter and override',
      spec: {
        toolsFilter: ['fetch', 'search'],
        toolsOverride: {
          fetch: { name: 'web_fetch', description: 'Fetch a page' },
          search: { description: 'Search' },
        },
      },
    },
  ],
  [
    mcpToolConfigKind,
    {
      name: 'empty override',
      spec: { toolsOverride: { fetch: {} } },
      rejected: ['spec.toolsOverride[fetch]', 'a tool override must set name or description'],
    },
  ],
  [
    mcpToolConfigKind,
    {
      name: 'duplicate filter entry',
      spec: { toolsFilter: ['fetch', 'fetch'] },
      rejected: ['spec.toolsFilter[1]', 'Duplicate value'],
    },
  ],
  [
    mcpToolConfigKind,
    {
      name: 'empty tool name',
      spec: { toolsFilter: [''] },
      rejected: ['spec.toolsFilter[0]', 'at least 1 chars'],
    },
  ],
  [mcpGroupKind, { name: 'description', spec: { description: 'Tools of team A' } }],
  [mcpGroupKind, { name: 'empty spec', spec: {} }],
  [
    mcpGroupKind,
    {
      name: 'description too long',
      spec: { description: a(1025) },
      rejected: ['spec.description', 'Too long'],
    },
  ],
];

describe('referenced kinds validation', () => {
  it.each(referencedRows.map(([kind, row]) => [`${kind.kind}: ${row.name}`, kind, row] as const))(
    '%s',
    async (_name, kind, row) => {
      await check(kind, row);
    },
  );
});

describe('defaults', () => {
  it('the API server applies the same defaults as the zod schema', async () => {
    const input = {
      remoteUrl: URL_,
      sessionStorage: { provider: 'redis', address: 'redis:6379', tls: {} },
      authzConfig: { configMap: { name: 'authz' } },
      audit: {},
      authServerRef: { name: 'as' },
      resourceOverrides: {
        proxyDeployment: { tolerations: [{ operator: 'Exists' }], imagePullSecrets: [{}] },
      },
    };
    const outcome = await objects.create(mcpRemoteProxyKind, { spec: input });
    if (!outcome.ok) throw new Error(outcome.message);
    created.push({ kind: mcpRemoteProxyKind, name: outcome.object.metadata.name });
    expect(outcome.object.spec).toEqual(mcpRemoteProxySpecSchema.parse(input));
    expect(outcome.object.spec).toMatchObject({
      proxyPort: 8080,
      transport: 'streamable-http',
      sessionAffinity: 'ClientIP',
      allowPrivateEndpoint: false,
      trustProxyHeaders: false,
      sessionStorage: { db: 0 },
      authzConfig: { type: 'configMap', configMap: { key: 'authz.json' } },
      audit: { enabled: false },
      authServerRef: { kind: 'MCPExternalAuthConfig' },
    });
    expect(outcome.object.spec).not.toHaveProperty('replicas');
  });

  it.each([
    [mcpOidcConfigKind, { type: 'kubernetesServiceAccount', kubernetesServiceAccount: {} }],
    [
      mcpOidcConfigKind,
      { type: 'inline', inline: { issuer: 'https://idp.example.com', caBundleRef: { name: 'ca' } } },
    ],
    [mcpAuthzConfigKind, { policies: ['permit(principal, action, resource);'] }],
    [mcpExternalAuthConfigKind, { type: 'tokenExchange', tokenExchange: { tokenUrl: 'https://idp/token' } }],
    [
      mcpTelemetryConfigKind,
      { openTelemetry: { endpoint: 'c:4318', tracing: {}, metrics: {} }, prometheus: {} },
    ],
  ] as const)('%s defaults match the zod schema', async (kind, input) => {
    const outcome = await objects.create(kind, { spec: input });
    if (!outcome.ok) throw new Error(outcome.message);
    created.push({ kind, name: outcome.object.metadata.name });
    expect(outcome.object.spec).toEqual(kind.spec.parse(input));
    expect(outcome.object.spec).not.toEqual(input);
  });
});

const condition = (extra: Spec = {}) => ({
  type: 'Ready',
  status: 'True',
  reason: 'DeploymentAvailable',
  message: '',
  lastTransitionTime: '2026-01-01T00:00:00Z',
  ...extra,
});

describe('status subresource', () => {
  async function newProxy(): Promise<StoredObject> {
    const outcome = await objects.create(mcpRemoteProxyKind, { spec: proxy({}), status: { phase: 'Ready' } });
    if (!outcome.ok) throw new Error(outcome.message);
    created.push({ kind: mcpRemoteProxyKind, name: outcome.object.metadata.name });
    return outcome.object;
  }

  it('a create or main-endpoint update ignores status; /status stores it', async () => {
    const stored = await newProxy();
    expect(stored.status).toBeUndefined();
    const status = {
      phase: 'Ready',
      message: 'proxy is available',
      url: 'http://mcp-x-remote-proxy.ns.svc.cluster.local:8080',
      observedGeneration: 1,
      conditions: [condition({ observedGeneration: 1 })],
      oidcConfigHash: 'abc',
    };
    const written = await objects.replaceStatus(mcpRemoteProxyKind, { ...stored, status });
    if (!written.ok) throw new Error(written.message);
    expect(written.object.status).toEqual(status);
    expect(mcpRemoteProxyStatusSchema.parse(written.object.status)).toEqual(status);
    const updated = await objects.replace(mcpRemoteProxyKind, {
      ...written.object,
      spec: { ...written.object.spec, proxyPort: 9090 },
      status: { phase: 'Failed' },
    });
    if (!updated.ok) throw new Error(updated.message);
    expect(updated.object.status).toEqual(status);
    expect(updated.object.metadata.generation).toBe(2);
    // A status write does not bump the generation.
    expect(written.object.metadata.generation).toBe(1);
  });

  const statusRows: [string, Spec, Rejection?][] = [
    ['phase Terminating', { phase: 'Terminating' }],
    ['phase Running', { phase: 'Running' }, ['status.phase', '"Pending"']],
    ['condition type 316', { conditions: [condition({ type: a(316) })] }],
    [
      'condition type 317',
      { conditions: [condition({ type: a(317) })] },
      ['status.conditions[0].type', 'Too long'],
    ],
    ['condition type with prefix', { conditions: [condition({ type: 'moat.dev/Valid' })] }],
    [
      'condition type bad',
      { conditions: [condition({ type: 'not ready' })] },
      ['status.conditions[0].type', 'should match'],
    ],
    [
      'condition status Maybe',
      { conditions: [condition({ status: 'Maybe' })] },
      ['status.conditions[0].status', '"Unknown"'],
    ],
    ['condition reason 1024', { conditions: [condition({ reason: a(1024) })] }],
    [
      'condition reason 1025',
      { conditions: [condition({ reason: a(1025) })] },
      ['status.conditions[0].reason', 'Too long'],
    ],
    [
      'condition reason empty',
      { conditions: [condition({ reason: '' })] },
      ['status.conditions[0].reason', 'at least 1 chars'],
    ],
    [
      'condition reason with space',
      { conditions: [condition({ reason: 'Not Ready' })] },
      ['status.conditions[0].reason', 'should match'],
    ],
    [
      'condition reason ending in comma',
      { conditions: [condition({ reason: 'A,' })] },
      ['status.conditions[0].reason', 'should match'],
    ],
    ['condition message 32768', { conditions: [condition({ message: a(32768) })] }],
    [
      'condition message 32769',
      { conditions: [condition({ message: a(32769) })] },
      ['status.conditions[0].message', 'Too long'],
    ],
    [
      'condition without lastTransitionTime',
      { conditions: [{ type: 'Ready', status: 'True', reason: 'R', message: '' }] },
      ['status.conditions[0].lastTransitionTime', 'Required value'],
    ],
    [
      'condition bad time',
      { conditions: [condition({ lastTransitionTime: 'yesterday' })] },
      ['status.conditions[0].lastTransitionTime', 'date-time'],
    ],
    [
      'condition negative generation',
      { conditions: [condition({ observedGeneration: -1 })] },
      ['status.conditions[0].observedGeneration', 'greater than or equal to 0'],
    ],
    [
      'duplicate condition type',
      { conditions: [condition(), condition()] },
      ['status.conditions[1]', 'Duplicate value'],
    ],
  ];

  it.each(statusRows)('%s', async (_name, status, rejected) => {
    const stored = await newProxy();
    const outcome = await objects.replaceStatus(mcpRemoteProxyKind, { ...stored, status });
    if (!rejected) {
      expect(outcome.ok ? 'accepted' : outcome.message).toBe('accepted');
      return;
    }
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.message).toContain(rejected[0]);
    expect(outcome.message).toContain(rejected[1]);
    expect(mcpRemoteProxyStatusSchema.safeParse(status).success).toBe(false);
  });

  it('config kinds keep status behind /status and list referencing workloads', async () => {
    const outcome = await objects.create(mcpGroupKind, { spec: {} });
    if (!outcome.ok) throw new Error(outcome.message);
    created.push({ kind: mcpGroupKind, name: outcome.object.metadata.name });
    const status = {
      observedGeneration: 1,
      configHash: 'h1',
      conditions: [condition({ type: 'Valid', reason: 'ConfigValid' })],
      referencingWorkloads: [{ kind: 'MCPRemoteProxy', name: 'a' }],
    };
    const written = await objects.replaceStatus(mcpGroupKind, { ...outcome.object, status });
    if (!written.ok) throw new Error(written.message);
    expect(written.object.status).toEqual(status);
    const bad = await objects.replaceStatus(mcpGroupKind, {
      ...written.object,
      status: { ...status, referencingWorkloads: [{ kind: 'Deployment', name: 'a' }] },
    });
    expect(bad.ok ? 'accepted' : bad.message).toContain('status.referencingWorkloads[0].kind');
  });
});

/** The YAML block after `<!-- example: NAME -->` in docs/operator-resources.md, one object per document. */
function docExample(name: string): Record<string, unknown>[] {
  const text = readFileSync(new URL('../../../docs/operator-resources.md', import.meta.url), 'utf8');
  const match = new RegExp(`<!-- example: ${name} -->\\n\`\`\`yaml\\n([\\s\\S]*?)\`\`\``).exec(text);
  if (!match) throw new Error(`docs/operator-resources.md has no example "${name}"`);
  return parseAllDocuments(match[1]!).map((d) => d.toJSON() as Record<string, unknown>);
}

describe('docs/operator-resources.md examples', () => {
  it.each(['minimal', 'full'])('the %s example is accepted as written', async (name) => {
    const documents = docExample(name);
    expect(documents.at(-1)).toMatchObject({ kind: 'MCPRemoteProxy' });
    for (const document of documents) {
      const kind = ALL_KINDS.find((k) => k.kind === document.kind);
      if (!kind) throw new Error(`example ${name}: unknown kind ${String(document.kind)}`);
      expect(kind.spec.safeParse(document.spec).error?.issues ?? []).toEqual([]);
      const outcome = await objects.create(kind, { spec: document.spec });
      expect(outcome.ok ? 'accepted' : outcome.message).toBe('accepted');
      if (outcome.ok) created.push({ kind, name: outcome.object.metadata.name });
    }
  });
});
