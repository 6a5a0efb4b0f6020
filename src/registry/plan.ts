/**
 * What running a registry entry means, as plain data the CLI turns into flags: the target (an
 * image, an npx:// or uvx:// package, or a remote URL), its transport, target port, permission
 * profile, default server arguments, the environment variables or headers it declares (values
 * may hold `{name}` placeholders, filled by the CLI from the declared variables), and an image's
 * provenance.
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
  /** A value to use when the user gives none: `value` (fixed) or `default`; may hold `{name}` placeholders. */
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
  /** Default server arguments, used when the user gives none after `--`; may hold `{name}` placeholders. */
  args: string[];
  /** Required arguments without a default: the user has to give the arguments after `--`. */
  missingArgs: string[];
  env: DeclaredInput[];
  headers: DeclaredInput[];
  /** The variables the `{name}` placeholders of args, env and header values refer to. */
  variables: DeclaredInput[];
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
    const declaredArgs = argumentsOf(pkg.packageArguments ?? []);
    const env = [
      ...(pkg.environmentVariables ?? []).map(declared),
      ...(image ? runtimeEnvironment(server.name, pkg.runtimeArguments ?? []) : []),
    ];
    return {
      ...common,
      kind: image ? 'image' : 'package',
      ...(image && settings.provenance !== undefined ? { provenance: settings.provenance } : {}),
      target: packageTarget(pkg),
      transport: pkg.transport.type,
      ...(port !== undefined ? { targetPort: port } : {}),
      args: declaredArgs.args,
      missingArgs: declaredArgs.missingArgs,
      env,
      headers: [],
      variables: variablesOf(server.name, [
        ...declaredArgs.used,
        ...(pkg.environmentVariables ?? []),
        ...(image ? (pkg.runtimeArguments ?? []) : []),
      ]),
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
      variables: variablesOf(server.name, remote.headers ?? []),
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
function argumentsOf(declaredArgs: readonly RegistryArgument[]): {
  args: string[];
  missingArgs: string[];
  used: RegistryArgument[];
} {
  const args: string[] = [];
  const missingArgs: string[] = [];
  const used: RegistryArgument[] = [];
  for (const arg of declaredArgs) {
    const value = arg.value ?? arg.default;
    const label = arg.type === 'named' ? arg.name : (arg.valueHint ?? 'a positional argument');
    if (value === undefined) {
      if (arg.isRequired) missingArgs.push(label);
    } else {
      args.push(...(arg.type === 'named' ? [arg.name, value] : [value]));
      used.push(arg);
    }
  }
  return { args, missingArgs, used };
}

/** Container runtime flags that only say what Moat does anyway (it runs stdio servers attached). */
const REDUNDANT_RUNTIME_FLAGS = new Set(['-i', '--interactive', '--rm', '--init']);

/**
 * An oci package's runtimeArguments (`docker run` flags): `-e`/`--env NAME=VALUE` become
 * environment variables; flags that change nothing in Moat are skipped. Anything else (mounts,
 * ports, capabilities…) could widen the sandbox behind the permission profile's back: refused.
 */
function runtimeEnvironment(server: string, runtimeArgs: readonly RegistryArgument[]): DeclaredInput[] {
  const env: DeclaredInput[] = [];
  for (const arg of runtimeArgs) {
    const value = arg.value ?? arg.default;
    const flag = arg.type === 'named' ? arg.name : value;
    if (flag !== undefined && REDUNDANT_RUNTIME_FLAGS.has(flag) && (arg.type === 'positional' || !value))
      continue;
    const assignment = arg.type === 'named' && ['-e', '--env'].includes(arg.name) ? value : undefined;
    const match = assignment !== undefined ? /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(assignment) : null;
    if (!match?.[1] || match[2] === undefined) {
      throw usageError(
        `registry server ${server}: the runtime argument ${JSON.stringify(flag ?? arg.type)}${value !== undefined && arg.type === 'named' ? ` ${JSON.stringify(value)}` : ''} ` +
          `cannot be applied; moat maps only -e/--env NAME=VALUE (and skips ${[...REDUNDANT_RUNTIME_FLAGS].join(', ')}) for oci packages; ` +
          'set mounts, ports and other container settings with moat run flags and the permission profile',
      );
    }
    env.push({
      name: match[1],
      ...(arg.description !== undefined ? { description: arg.description } : {}),
      required: arg.isRequired ?? false,
      secret: arg.isSecret ?? false,
      value: match[2],
    });
  }
  return env;
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The `{name}` placeholders of a value, in order. */
export function placeholdersIn(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((m) => m[1] ?? '');
}

/** Fills `{name}` placeholders; `where` names the value in the error for one without a value. */
export function fillPlaceholders(
  template: string,
  values: ReadonlyMap<string, string>,
  where: string,
): string {
  return template.replace(PLACEHOLDER, (whole, name: string) => {
    const value = values.get(name);
    if (value === undefined) throw usageError(`${where}: no value for the placeholder ${whole}`);
    return value;
  });
}

/**
 * The variables the inputs declare for their `{name}` placeholders (one per name). A placeholder
 * its input does not declare is an error naming both.
 */
function variablesOf(server: string, inputs: readonly (RegistryArgument | RegistryInput)[]): DeclaredInput[] {
  const byName = new Map<string, DeclaredInput>();
  for (const item of inputs) {
    const variables = item.variables ?? {};
    const label = typeof item.name === 'string' ? item.name : (item.value ?? 'an argument');
    for (const name of placeholdersIn(item.value ?? item.default ?? '')) {
      const variable = variables[name];
      if (!variable)
        throw usageError(
          `registry server ${server}: ${label} uses the placeholder {${name}}, which its variables do not declare`,
        );
      byName.set(name, declared({ ...variable, name }));
    }
  }
  return [...byName.values()];
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
