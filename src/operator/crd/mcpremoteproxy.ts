/**
 * MCPRemoteProxy (spec §2.2): a policy-enforcing proxy Deployment + Service in front of a remote MCP server.
 * Every field, default and limit of spec §2.2/§8 is here; cross-field rules are CEL (see withRules).
 */
import * as z from 'zod';
import { defineKind } from './kind.js';
import { cedarArgumentFields, cedarClaimFields, cedarPoliciesFields } from './mcpauthzconfig.js';
import { affinitySchema, tolerationSchema } from './scheduling.js';
import {
  conditionsSchema,
  headerName,
  int32,
  int64,
  listMap,
  objectName,
  positiveDuration,
  secretKeyRefSchema,
  stringMap,
  withRules,
} from './schema-parts.js';

/** A reference to an object of a fixed kind in the proxy's namespace. */
const nameRef = (what: string) =>
  z.object({ name: objectName().describe(`Name of the ${what} in the same namespace.`) });

export const oidcConfigRefSchema = z.object({
  name: objectName().describe('Name of the MCPOIDCConfig in the same namespace.'),
  audience: z
    .string()
    .min(1)
    .max(1024)
    .describe(
      'Audience incoming tokens must carry; unique per proxy so a token for one cannot be replayed on another.',
    ),
  resourceUrl: z
    .string()
    .max(2048)
    .regex(/^https?:\/\/\S+$/)
    .optional()
    .describe('Public URL in the RFC 9728 protected-resource metadata; default the internal Service URL.'),
  scopes: z
    .array(z.string().min(1).max(256))
    .max(64)
    .meta({ 'x-kubernetes-list-type': 'atomic' })
    .optional()
    .describe('Scopes advertised in the protected-resource metadata; default [openid].'),
});

export const authServerRefSchema = z.object({
  kind: z.enum(['MCPExternalAuthConfig']).default('MCPExternalAuthConfig'),
  name: objectName().describe('Name of the MCPExternalAuthConfig in the same namespace.'),
});

export const telemetryConfigRefSchema = z.object({
  name: objectName().describe('Name of the MCPTelemetryConfig in the same namespace.'),
  serviceName: z
    .string()
    .max(253)
    .optional()
    .describe('Telemetry service name; unique per proxy; default moat-<proxy name>.'),
});

export const inlineAuthzSchema = z.object({
  ...cedarPoliciesFields,
  primaryUpstreamProvider: z
    .string()
    .min(1)
    .max(63)
    .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/)
    .optional()
    .describe('Deprecated and without effect here (no embedded auth server); setting it raises a condition.'),
});

export const authzConfigSchema = withRules(
  z.object({
    type: z.enum(['configMap', 'inline']).default('configMap').describe('Where the Cedar config comes from.'),
    configMap: z
      .object({
        name: objectName().describe('Name of the ConfigMap in the same namespace.'),
        key: z.string().min(1).max(253).default('authz.json').describe('Key holding the authz config.'),
      })
      .optional()
      .describe(
        "ConfigMap with a Cedar authz config file (Moat's --authz-config format); only with type configMap.",
      ),
    inline: inlineAuthzSchema.optional().describe('Cedar policies given here; only with type inline.'),
    ...cedarClaimFields,
    ...cedarArgumentFields,
  }),
  [
    {
      rule: "self.type == 'configMap' ? has(self.configMap) : !has(self.configMap)",
      message: "configMap must be set when type is 'configMap', and must not be set otherwise",
      fieldPath: '.configMap',
      holds: (a) => (a.type === 'configMap') === (a.configMap !== undefined),
    },
    {
      rule: "self.type == 'inline' ? has(self.inline) : !has(self.inline)",
      message: "inline must be set when type is 'inline', and must not be set otherwise",
      fieldPath: '.inline',
      holds: (a) => (a.type === 'inline') === (a.inline !== undefined),
    },
  ],
);

export const headerFromSecretSchema = z.object({
  headerName: headerName().describe('Header added to every request to the remote server.'),
  valueSecretRef: secretKeyRefSchema.describe('Secret key holding the header value.'),
});

export const headerForwardSchema = withRules(
  z.object({
    addPlaintextHeaders: stringMap()
      .optional()
      .describe('Header name to literal value; visible to anyone who can read this object, so no secrets.'),
    addHeadersFromSecret: listMap(headerFromSecretSchema, ['headerName'], 64)
      .optional()
      .describe('Headers whose values come from Secrets.'),
  }),
  [
    {
      rule: '!has(self.addPlaintextHeaders) || !has(self.addHeadersFromSecret) || self.addHeadersFromSecret.all(h, !(h.headerName in self.addPlaintextHeaders))',
      message: 'a header must not be in both addPlaintextHeaders and addHeadersFromSecret',
      fieldPath: '.addHeadersFromSecret',
      holds: (h) =>
        (h.addHeadersFromSecret ?? []).every((s) => !(s.headerName in (h.addPlaintextHeaders ?? {}))),
    },
  ],
);

export const sessionStorageTlsSchema = withRules(
  z.object({
    caCertSecretRef: secretKeyRefSchema
      .optional()
      .describe('Secret key with the PEM CA certificate of Redis; unset uses the system roots.'),
    insecureSkipVerify: z
      .boolean()
      .optional()
      .describe('Skip certificate and hostname verification (testing only).'),
  }),
  [
    {
      rule: '!(has(self.caCertSecretRef) && has(self.insecureSkipVerify) && self.insecureSkipVerify)',
      message:
        'caCertSecretRef and insecureSkipVerify: true cannot be combined: a CA is useless without verification',
      fieldPath: '.insecureSkipVerify',
      holds: (t) => !(t.caCertSecretRef && t.insecureSkipVerify),
    },
  ],
);

export const sessionStorageSchema = withRules(
  z.object({
    provider: z
      .enum(['memory', 'redis'])
      .describe('Session store: memory (per pod) or redis (shared by replicas).'),
    address: z.string().min(1).max(1024).optional().describe('Redis address host:port; required for redis.'),
    db: int32().min(0).default(0).describe('Redis database number.'),
    keyPrefix: z.string().max(256).optional().describe('Prefix of every Redis key.'),
    passwordRef: secretKeyRefSchema.optional().describe('Secret key holding the Redis password.'),
    tls: sessionStorageTlsSchema
      .optional()
      .describe('TLS to Redis; {} verifies against the system roots. Unset means plaintext.'),
    commandTimeout: positiveDuration()
      .optional()
      .describe('Longest wait for one Redis command (sessions, rate limits, pins); unset is 2s.'),
  }),
  [
    {
      rule: "self.provider != 'redis' || has(self.address)",
      message: "address is required when provider is 'redis'",
      fieldPath: '.address',
      holds: (s) => s.provider !== 'redis' || s.address !== undefined,
    },
    {
      rule: "self.provider == 'redis' || !has(self.tls)",
      message: "tls is allowed only when provider is 'redis'",
      fieldPath: '.tls',
      holds: (s) => s.provider === 'redis' || s.tls === undefined,
    },
    {
      rule: "self.provider == 'redis' || !has(self.commandTimeout)",
      message: "commandTimeout is allowed only when provider is 'redis'",
      fieldPath: '.commandTimeout',
      holds: (s) => s.provider === 'redis' || s.commandTimeout === undefined,
    },
    {
      rule: "self.provider == 'redis' || (!has(self.address) && !has(self.passwordRef) && !has(self.keyPrefix))",
      message:
        "address, passwordRef and keyPrefix configure Redis and are allowed only when provider is 'redis'",
      holds: (s) => s.provider === 'redis' || (!s.address && !s.passwordRef && s.keyPrefix === undefined),
    },
  ],
);

const rateLimitRuleSchema = z.object({
  requestsPerMinute: int32().min(1).describe('Steady rate: requests per minute.'),
  burst: int32().min(1).optional().describe('Requests allowed at once; unset means one minute of the rate.'),
});

const guardrailAction = z.enum(['block', 'redact', 'warn', 'off']);
const guardrailDirections = {
  toServer: guardrailAction
    .optional()
    .describe('What the client sends (tool and prompt arguments, its answers).'),
  toClient: guardrailAction
    .optional()
    .describe(
      'What the server sends (tool results, prompts, resources; its sampling and elicitation requests and notifications).',
    ),
};

export const guardrailsSchema = z.object({
  toServer: guardrailDirections.toServer.describe('Default action towards the server; unset is block.'),
  toClient: guardrailDirections.toClient.describe('Default action towards the client; unset is redact.'),
  detectors: z
    .record(z.string().max(64), z.object(guardrailDirections))
    .optional()
    .describe('Per detector (by id, see docs/security.md): its actions, overriding the defaults.'),
});

export const rateLimitSchema = z.object({
  perPrincipal: rateLimitRuleSchema
    .optional()
    .describe('Every MCP message with a method, per principal (token issuer + subject).'),
  perTool: rateLimitRuleSchema.optional().describe('tools/call per principal and tool.'),
  tools: z
    .record(z.string().max(256), rateLimitRuleSchema)
    .optional()
    .describe('Rules replacing perTool for the named tools.'),
  onStoreFailure: z
    .enum(['deny', 'allow'])
    .default('deny')
    .describe('When Redis (sessionStorage) fails: deny with 503, or allow unlimited.'),
});

const quantity = () =>
  z
    .string()
    .max(64)
    .regex(
      /^[+-]?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$/,
    );

const computeResources = () =>
  z.object({
    cpu: quantity().optional().describe('CPU quantity, for example 100m or 0.5.'),
    memory: quantity().optional().describe('Memory quantity, for example 128Mi.'),
  });

export const resourcesSchema = z.object({
  limits: computeResources().optional(),
  requests: computeResources().optional(),
});

const labelsAndAnnotations = () => ({
  annotations: stringMap().optional().describe('Added to, or overriding, the generated annotations.'),
  labels: stringMap().optional().describe('Added to, or overriding, the generated labels.'),
});

export const envVarSchema = z.object({
  name: z
    .string()
    .min(1)
    .max(256)
    .regex(/^[-._a-zA-Z][-._a-zA-Z0-9]*$/),
  value: z.string().max(32768),
});

export const proxyDeploymentOverridesSchema = z.object({
  ...labelsAndAnnotations(),
  podTemplateMetadataOverrides: z
    .object(labelsAndAnnotations())
    .optional()
    .describe('Labels and annotations of the pod template.'),
  env: listMap(envVarSchema, ['name'], 128)
    .optional()
    .describe('Environment of the moat container; MOAT_DEBUG=true enables debug logging.'),
  imagePullSecrets: z
    .array(z.object({ name: z.string().max(253).default('') }))
    .max(32)
    .meta({ 'x-kubernetes-list-type': 'atomic' })
    .optional()
    .describe('Pull secrets for the Deployment and the generated ServiceAccount.'),
  nodeSelector: stringMap().optional().describe('Merged with podTemplateSpec; podTemplateSpec wins per key.'),
  tolerations: z
    .array(tolerationSchema)
    .max(64)
    .meta({ 'x-kubernetes-list-type': 'atomic' })
    .optional()
    .describe('Replaced as a whole by tolerations set in podTemplateSpec.'),
  affinity: affinitySchema
    .optional()
    .describe('Merged per sub-field with podTemplateSpec; podTemplateSpec wins.'),
});

export const resourceOverridesSchema = z.object({
  proxyDeployment: proxyDeploymentOverridesSchema
    .optional()
    .describe('Overrides of the proxy Deployment and its pods.'),
  proxyService: z
    .object(labelsAndAnnotations())
    .optional()
    .describe('Labels and annotations added to (or overriding) those of the Service.'),
});

export const mcpRemoteProxySpecSchema = withRules(
  z.object({
    remoteUrl: z
      .string()
      .max(2048)
      .regex(/^https?:\/\//)
      .describe('URL of the remote MCP server (http:// or https://).'),
    allowPrivateEndpoint: z
      .boolean()
      .default(false)
      .describe(
        'Allow RFC 1918, IPv6 ULA and *.cluster.local targets. Loopback, link-local, metadata stay blocked.',
      ),
    proxyPort: int32()
      .min(1)
      .max(65535)
      .default(8080)
      .describe('Port of the proxy container and its Service.'),
    transport: z
      .enum(['sse', 'streamable-http'])
      .default('streamable-http')
      .describe('Client-facing transport.'),
    trustProxyHeaders: z.boolean().default(false).describe('Trust X-Forwarded-Proto/Host/Port/Prefix.'),
    endpointPrefix: z.string().max(256).optional().describe('Path prefix prepended to SSE endpoint URLs.'),
    upstreamTimeout: positiveDuration()
      .optional()
      .describe(
        "Longest wait for the remote server's answer to a request, or a stream to open; unset is 5m.",
      ),
    replicas: int32().min(0).optional().describe('Pod replicas; unset leaves the Deployment count alone.'),
    serviceAccount: objectName()
      .optional()
      .describe('Existing ServiceAccount; unset creates one with its RBAC.'),
    sessionAffinity: z
      .enum(['ClientIP', 'None'])
      .default('ClientIP')
      .describe('Service session affinity; None only with redis session storage.'),
    sessionStorage: sessionStorageSchema
      .optional()
      .describe('Where MCP sessions live; unset means in pod memory (one replica, or ClientIP affinity).'),
    toolPinning: z
      .enum(['warn', 'enforce'])
      .optional()
      .describe(
        'Tool definition pinning: warn logs and audits a changed tool; enforce also hides it; unset is off. Pins live in redis sessionStorage, else in pod memory.',
      ),
    guardrails: guardrailsSchema
      .optional()
      .describe(
        'Secrets and personal data in tool calls and results: blocked, redacted or audited; unset is off.',
      ),
    rateLimit: rateLimitSchema
      .optional()
      .describe('Token-bucket rate limits, shared by replicas through redis sessionStorage, else per pod.'),
    oidcConfigRef: oidcConfigRefSchema
      .optional()
      .describe('Incoming-token validation; unset means the proxy is UNAUTHENTICATED.'),
    authServerRef: authServerRefSchema
      .optional()
      .describe(
        'Embedded authorization server for clients (not implemented by Moat yet; reported as a condition).',
      ),
    authzConfig: authzConfigSchema.optional().describe('Cedar authorization; exclusive with authzConfigRef.'),
    authzConfigRef: nameRef('MCPAuthzConfig')
      .optional()
      .describe('Shared Cedar authorization; exclusive with authzConfig.'),
    externalAuthConfigRef: nameRef('MCPExternalAuthConfig')
      .optional()
      .describe('Authentication to the remote server.'),
    groupRef: nameRef('MCPGroup').optional().describe('Group this proxy belongs to.'),
    telemetryConfigRef: telemetryConfigRefSchema
      .optional()
      .describe('OpenTelemetry and Prometheus settings.'),
    toolConfigRef: nameRef('MCPToolConfig').optional().describe('Tool filter and overrides.'),
    audit: z
      .object({
        enabled: z.boolean().default(false).describe('Audit logging with the default configuration.'),
      })
      .optional()
      .describe('Audit log of MCP requests, on the proxy log stream.'),
    headerForward: headerForwardSchema.optional().describe('Headers added to requests to the remote server.'),
    resourceOverrides: resourceOverridesSchema
      .optional()
      .describe('Labels, annotations, env and scheduling of the created objects.'),
    resources: resourcesSchema.optional().describe('Resource requirements of the moat container.'),
    podTemplateSpec: z
      .looseObject({})
      .meta({ 'x-kubernetes-preserve-unknown-fields': true })
      .optional()
      .describe('Pod template merged onto the generated one; the proxy container is named moat.'),
  }),
  [
    {
      rule: '!(has(self.authzConfig) && has(self.authzConfigRef))',
      message: 'authzConfig and authzConfigRef are mutually exclusive: set at most one',
      fieldPath: '.authzConfigRef',
      holds: (s) => !(s.authzConfig && s.authzConfigRef),
    },
  ],
);

export const PROXY_PHASES = ['Pending', 'Ready', 'Failed', 'Terminating'] as const;
export type ProxyPhase = (typeof PROXY_PHASES)[number];

const hash = (of: string) => z.string().max(128).optional().describe(`Hash of the referenced ${of} spec.`);

export const mcpRemoteProxyStatusSchema = z.object({
  phase: z.enum(PROXY_PHASES).optional(),
  message: z.string().max(32768).optional(),
  url: z.string().max(2048).optional().describe('In-cluster URL of the proxy.'),
  externalUrl: z
    .string()
    .max(2048)
    .optional()
    .describe('External URL, from oidcConfigRef.resourceUrl when set.'),
  observedGeneration: int64().min(0).optional(),
  conditions: conditionsSchema.optional(),
  authServerConfigHash: hash('authServerRef'),
  authzConfigHash: hash('authorization config'),
  externalAuthConfigHash: hash('MCPExternalAuthConfig'),
  oidcConfigHash: hash('MCPOIDCConfig'),
  telemetryConfigHash: hash('MCPTelemetryConfig'),
  toolConfigHash: hash('MCPToolConfig'),
});

export type MCPRemoteProxySpec = z.output<typeof mcpRemoteProxySpecSchema>;
export type MCPRemoteProxySpecInput = z.input<typeof mcpRemoteProxySpecSchema>;
export type MCPRemoteProxyStatus = z.output<typeof mcpRemoteProxyStatusSchema>;
export type MCPRemoteProxyStatusInput = z.input<typeof mcpRemoteProxyStatusSchema>;
export type AuthzConfig = z.output<typeof authzConfigSchema>;
export type SessionStorage = z.output<typeof sessionStorageSchema>;
export type HeaderForward = z.output<typeof headerForwardSchema>;
export type ResourceOverrides = z.output<typeof resourceOverridesSchema>;
export type ProxyDeploymentOverrides = z.output<typeof proxyDeploymentOverridesSchema>;
export type OidcConfigRef = z.output<typeof oidcConfigRefSchema>;
export type TelemetryConfigRef = z.output<typeof telemetryConfigRefSchema>;

export const mcpRemoteProxyKind = defineKind({
  kind: 'MCPRemoteProxy',
  plural: 'mcpremoteproxies',
  shortNames: ['rp', 'mcprp'],
  standardColumns: false,
  columns: [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Remote URL', type: 'string', jsonPath: '.spec.remoteUrl' },
    { name: 'URL', type: 'string', jsonPath: '.status.url' },
    { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
  specRequired: true,
  spec: mcpRemoteProxySpecSchema,
  status: mcpRemoteProxyStatusSchema,
});
