/**
 * Registry entries in the official MCP registry's `server.json` format
 * (https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json): packages with a
 * registryType (npm, pypi, oci…), transport, environment variables, arguments, and remotes with
 * headers. Fields Moat does not use are kept as they are (the format grows); the fields Moat
 * does use are checked, and a bad one is named by its path. Moat's own settings (tags, the
 * permission profile) live in `_meta` under the publisher-provided key, as the registry allows.
 */
import * as z from 'zod';
import { describeIssues } from '../config/issues.js';
import { permissionProfileSchema } from '../config/runconfig.js';
import { usageError } from '../util/errors.js';

/** The `_meta` key for publisher-provided data, and Moat's key inside it. */
export const PUBLISHER_META = 'io.modelcontextprotocol.registry/publisher-provided';
export const MOAT_META = 'dev.moat';

const plainInput = {
  description: z.string().optional(),
  isRequired: z.boolean().optional(),
  isSecret: z.boolean().optional(),
  default: z.string().optional(),
  value: z.string().optional(),
  choices: z.array(z.string()).optional(),
};

/** A `{name}` placeholder's value is declared in `variables` (server.json's InputWithVariables). */
const variableName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected a variable name (letters, digits, _)');
const input = {
  ...plainInput,
  variables: z.record(variableName, z.looseObject(plainInput)).optional(),
};

const keyValueInput = z.looseObject({ name: z.string().min(1), ...input });

const argument = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('positional'), valueHint: z.string().optional(), ...input }),
  z.looseObject({ type: z.literal('named'), name: z.string().min(1), ...input }),
]);

const transport = z.looseObject({
  type: z.enum(['stdio', 'streamable-http', 'sse']),
  url: z.string().optional(),
  headers: z.array(keyValueInput).optional(),
});

const pkg = z.looseObject({
  registryType: z.string().min(1),
  identifier: z.string().min(1),
  version: z.string().min(1).optional(),
  transport,
  runtimeArguments: z.array(argument).optional(),
  packageArguments: z.array(argument).optional(),
  environmentVariables: z.array(keyValueInput).optional(),
});

const remote = z.looseObject({
  type: z.enum(['streamable-http', 'sse']),
  url: z.url({ protocol: /^https?$/ }),
  headers: z.array(keyValueInput).optional(),
});

/**
 * Where an oci package's image comes from, checked by --image-verification against the image's
 * Sigstore signature. ToolHive's `provenance` object with its field names; server.json has no
 * standard place for it.
 */
const provenanceSchema = z.strictObject({
  sigstore_url: z.string().min(1).optional(),
  repository_uri: z.string().min(1).optional(),
  repository_ref: z.string().min(1).optional(),
  signer_identity: z.string().min(1).optional(),
  runner_environment: z.string().min(1).optional(),
  cert_issuer: z.string().min(1).optional(),
});

/** Moat's extension: `_meta["io.modelcontextprotocol.registry/publisher-provided"]["dev.moat"]`. */
const moatMetaSchema = z.strictObject({
  tags: z.array(z.string().min(1)).optional(),
  /** A built-in profile name (none, network) or a profile, the default for --permission-profile. */
  permissions: z.union([z.enum(['none', 'network']), permissionProfileSchema]).optional(),
  /** The oci package's provenance (ignored for other package types, which Moat builds itself). */
  provenance: provenanceSchema.optional(),
});

export const serverSchema = z.looseObject({
  name: z
    .string()
    .regex(
      /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/,
      'expected reverse-DNS namespace/name, e.g. io.github.owner/server',
    ),
  title: z.string().optional(),
  description: z.string(),
  version: z.string().optional(),
  websiteUrl: z.string().optional(),
  repository: z.looseObject({ url: z.string().optional() }).optional(),
  packages: z.array(pkg).optional(),
  remotes: z.array(remote).optional(),
  _meta: z
    .looseObject({ [PUBLISHER_META]: z.looseObject({ [MOAT_META]: moatMetaSchema.optional() }).optional() })
    .optional(),
});

export type RegistryServer = z.infer<typeof serverSchema>;
export type RegistryPackage = z.infer<typeof pkg>;
export type RegistryRemote = z.infer<typeof remote>;
export type RegistryArgument = z.infer<typeof argument>;
export type RegistryInput = z.infer<typeof keyValueInput>;
export type RegistryVariables = NonNullable<RegistryInput['variables']>;
export type MoatServerMeta = z.infer<typeof moatMetaSchema>;

/**
 * A registry document: `{ "servers": [...] }` (each a server.json, or `{ "server": {...} }` as
 * the registry API lists them), or ToolHive's `{ "data": { "servers": [...] } }`.
 */
const listed = z.union([
  z.looseObject({ server: serverSchema }).transform((item) => item.server),
  serverSchema,
]);
const documentSchema = z.union([
  z.looseObject({ servers: z.array(listed) }),
  z.looseObject({ data: z.looseObject({ servers: z.array(listed) }) }).transform((doc) => doc.data),
]);

/** Parses a registry document; `source` names the file or URL in the error. */
export function parseRegistryDocument(value: unknown, source: string): RegistryServer[] {
  const result = documentSchema.safeParse(value);
  if (!result.success) {
    throw usageError(`invalid registry ${source}: ${describeRegistryIssues(value, result.error)}`);
  }
  const servers = result.data.servers;
  const seen = new Set<string>();
  for (const server of servers) {
    if (seen.has(server.name))
      throw usageError(`invalid registry ${source}: server ${server.name} is listed twice`);
    seen.add(server.name);
  }
  return servers;
}

/**
 * A union's error lists every branch; the useful one is the branch the document meant, which is
 * the shape it has (a `servers` array, or a `data` object).
 */
function describeRegistryIssues(value: unknown, error: z.ZodError): string {
  const doc = value as { servers?: unknown; data?: unknown } | null;
  if (typeof doc !== 'object' || doc === null || (doc.servers === undefined && doc.data === undefined)) {
    return 'expected an object with a "servers" array of server.json entries';
  }
  const servers = doc.servers ?? (doc.data as { servers?: unknown } | undefined)?.servers;
  const prefix = doc.servers !== undefined ? 'servers' : 'data.servers';
  if (!Array.isArray(servers)) return `field ${prefix}: expected an array of server.json entries`;
  for (const [index, item] of (servers as unknown[]).entries()) {
    const wrapped = (item as { server?: unknown } | null)?.server;
    const parsed = serverSchema.safeParse(wrapped ?? item);
    if (!parsed.success) {
      const at = wrapped !== undefined ? `[${index}].server` : `[${index}]`;
      return describeIssues(parsed.error).replaceAll('field ', `field ${prefix}${at}.`);
    }
  }
  return describeIssues(error);
}

/** Moat's extension fields of an entry (empty when it has none). */
export function moatSettings(server: RegistryServer): MoatServerMeta {
  return server._meta?.[PUBLISHER_META]?.[MOAT_META] ?? {};
}
