/**
 * What running a registry entry means, as plain data the CLI turns into flags: the target (an
 * image, an npx:// or uvx:// package, or a remote URL), its transport, target port, permission
 * profile, default server arguments, and the environment variables or headers it declares.
 * A package is preferred over a remote (it runs locally, under Moat's isolation).
 */
import type { PermissionProfile } from '../config/runconfig.js';
import { usageError } from '../util/errors.js';
import {
  moatSettings,
  type MoatServerMeta,
  type RegistryArgument,
  type RegistryInput,
  type RegistryPackage,
  type RegistryServer,
} from './schema.js';

export type ImageProvenanceFields = NonNullable<MoatServerMeta['provenance']>;

export type RegistryTransport = 'stdio' | 'streamable-http' | 'sse';

/** An environment variable or header the entry declares. */
export interface DeclaredInput {
  name: string;
  description?: string;
  required: boolean;
  secret: boolean;
  /** A value to use when the user gives none: `value` (fixed) or `default`. */
  value?: string;
}

export interface RunPlan {
  server: string;
  kind: 'image' | 'package' | 'remote';
  /** What `moat run` runs: an image reference, npx://id@version, uvx://id@version, or a URL. */
  target: string;
  transport: RegistryTransport;
  /** The port of a package's http transport URL (`http://localhost:8080/mcp`). */
  targetPort?: number;
  permissions?: 'none' | 'network' | PermissionProfile;
  /** An image's provenance from the entry, for --image-verification (only for kind `image`). */
  provenance?: ImageProvenanceFields;
  /** Default server arguments, used when the user gives none after `--`. */
  args: string[];
  /** Required arguments without a default: the user has to give the arguments after `--`. */
  missingArgs: string[];
  env: DeclaredInput[];
  headers: DeclaredInput[];
}

/** registryType → the scheme Moat builds it with; oci runs the image as it is. */
const RUNNABLE = ['oci', 'npm', 'pypi'] as const;

export function planFor(server: RegistryServer): RunPlan {
  const settings = moatSettings(server);
  const common = {
    server: server.name,
    ...(settings.permissions !== undefined ? { permissions: settings.permissions } : {}),
  };
  const packages = server.packages ?? [];
  const pkg = packages.find((p) => (RUNNABLE as readonly string[]).includes(p.registryType));
  if (pkg) {
    const port = portOf(pkg.transport.url);
    const image = pkg.registryType === 'oci';
    return {
      ...common,
      kind: image ? 'image' : 'package',
      ...(image && settings.provenance !== undefined ? { provenance: settings.provenance } : {}),
      target: packageTarget(pkg),
      transport: pkg.transport.type,
      ...(port !== undefined ? { targetPort: port } : {}),
      ...argumentsOf(pkg.packageArguments ?? []),
      env: (pkg.environmentVariables ?? []).map(declared),
      headers: [],
    };
  }
  const remote = server.remotes?.[0];
  if (remote) {
    return {
      ...common,
      kind: 'remote',
      target: remote.url,
      transport: remote.type,
      args: [],
      missingArgs: [],
      env: [],
      headers: (remote.headers ?? []).map(declared),
    };
  }
  const types = packages.map((p) => p.registryType);
  throw usageError(
    `registry server ${server.name} has ${types.length > 0 ? `only ${types.join(', ')} packages` : 'no packages and no remotes'}; ` +
      `moat runs packages of type ${RUNNABLE.join(', ')} and remotes`,
  );
}

function packageTarget(pkg: RegistryPackage): string {
  const { identifier, version } = pkg;
  switch (pkg.registryType) {
    case 'npm':
      return `npx://${identifier}${version ? `@${version}` : ''}`;
    case 'pypi':
      return `uvx://${identifier}${version ? `@${version}` : ''}`;
    default: {
      // An oci identifier carries its tag; older entries give it as `version`.
      const tagged = /[:@][^/]*$/.test(identifier);
      return tagged || !version ? identifier : `${identifier}:${version}`;
    }
  }
}

function portOf(url: string | undefined): number | undefined {
  if (url === undefined) return undefined;
  const match = /^https?:\/\/[^/:]+:(\d+)/.exec(url);
  return match ? Number(match[1]) : undefined;
}

/** The command-line words of the declared arguments; a required one without a value cannot be guessed. */
function argumentsOf(declaredArgs: readonly RegistryArgument[]): { args: string[]; missingArgs: string[] } {
  const args: string[] = [];
  const missingArgs: string[] = [];
  for (const arg of declaredArgs) {
    const value = arg.value ?? arg.default;
    const label = arg.type === 'named' ? arg.name : (arg.valueHint ?? 'a positional argument');
    if (value === undefined) {
      if (arg.isRequired) missingArgs.push(label);
    } else {
      args.push(...(arg.type === 'named' ? [arg.name, value] : [value]));
    }
  }
  return { args, missingArgs };
}

function declared(input: RegistryInput): DeclaredInput {
  const value = input.value ?? input.default;
  return {
    name: input.name,
    ...(input.description !== undefined ? { description: input.description } : {}),
    required: input.isRequired ?? false,
    secret: input.isSecret ?? false,
    ...(value !== undefined ? { value } : {}),
  };
}
