/**
 * The container parts of a RunConfig built from flags: the permission profile with --network,
 * network isolation, volume mounts, labels, and the protocol-scheme build options.
 */
import { DEFAULTS } from '../config/defaults.js';
import { parsePermissionProfile } from '../config/permission-profile.js';
import type { RunConfigInput } from '../config/runconfig.js';
import { baseImages, checkRequest } from '../runtime/build/recipe.js';
import { isolationDroppedReason, validateLabel } from '../runtime/container-spec.js';
import { builtinProfile, parseVolume } from '../runtime/permissions.js';
import { errorMessage, usageError } from '../util/errors.js';
import { dropUndefined } from './optional-fields.js';
import type { BuildContext, ExistingFn } from './run-build-context.js';
import type { ParsedRun } from './run-command.js';
import type { Target } from './run-target.js';
import { keyValueMap } from './run-values.js';

/** The permission profile (builtin or JSON file), with --network as its network mode. */
export function permissionProfile(
  { flags, registry }: ParsedRun,
  ctx: BuildContext,
  abs: (path: string) => string,
): Pick<RunConfigInput, 'permission_profile' | 'permission_profile_name_or_path'> {
  // The registry entry's profile is the default (spec §2.1); a profile object was validated with the entry.
  const fromRegistry = flags.permissionProfile === undefined ? registry?.permissions : undefined;
  const chosen =
    flags.permissionProfile ?? (typeof fromRegistry === 'string' ? fromRegistry : DEFAULTS.permissionProfile);
  let profile = typeof fromRegistry === 'object' ? structuredClone(fromRegistry) : builtinProfile(chosen);
  if (profile === undefined) {
    const path = abs(chosen);
    const text = ctx.readTextFile(path, 'permission-profile');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw usageError(`--permission-profile ${chosen}: not valid JSON (${errorMessage(err)})`);
    }
    profile = parsePermissionProfile(json, `--permission-profile ${path}`);
  }
  if (flags.network !== undefined) profile.network = { ...profile.network, mode: flags.network };
  return {
    ...(flags.permissionProfile !== undefined
      ? { permission_profile_name_or_path: flags.permissionProfile }
      : {}),
    permission_profile: profile,
  };
}

/** `-v` mounts with absolute host paths (so a restart from another directory mounts the same). */
export function volumes(values: readonly string[], ctx: BuildContext): string[] {
  return values.map((text) => {
    const mount = parseVolume(text, ctx.cwd);
    if (ctx.pathKind(mount.source) === undefined) {
      throw usageError(`--volume ${text}: host path does not exist: ${mount.source}`);
    }
    return `${mount.source}:${mount.target}${mount.readOnly ? ':ro' : ''}`;
  });
}

export function labels(values: readonly string[]): Record<string, string> | undefined {
  const map = keyValueMap('label', values, 'key=value');
  for (const [key, value] of Object.entries(map ?? {})) validateLabel(key, value);
  return map;
}

/**
 * Network isolation needs bridge networking: dropped for other modes, an error if asked for.
 * Moat always enforces a profile that restricts outbound traffic, so opting out of isolation
 * with such a profile is refused rather than ignored.
 */
export function isolation(
  { flags, explicit }: ParsedRun,
  ctx: BuildContext,
  profile: RunConfigInput['permission_profile'],
): Partial<RunConfigInput> {
  if (!flags.isolateNetwork && profile?.network?.outbound?.insecure_allow_all !== true) {
    throw usageError(
      `--isolate-network=false conflicts with the permission profile ${JSON.stringify(profile?.name ?? 'custom')}, ` +
        'which restricts outbound traffic (moat always enforces it); use --permission-profile network ' +
        'to allow all outbound traffic',
    );
  }
  const mode = flags.network;
  const bridge = mode === undefined || mode === '' || mode === 'bridge' || mode === 'default';
  let isolate = flags.isolateNetwork;
  if (isolate && !bridge) {
    if (explicit.has('isolate-network')) {
      throw usageError(
        `--isolate-network cannot be enforced with --network ${mode}: isolation needs bridge networking ` +
          '(use --network bridge, or --isolate-network=false)',
      );
    }
    ctx.warn(isolationDroppedReason(mode));
    isolate = false;
  }
  if (flags.allowDockerGateway && !isolate) {
    throw usageError(
      '--allow-docker-gateway only applies with network isolation (--isolate-network on a bridge network)',
    );
  }
  return { isolate_network: isolate, ...(flags.allowDockerGateway ? { allow_docker_gateway: true } : {}) };
}

/** The build options, checked like the build checks them (a bad value is a usage error now, not at build time). */
export function runtimeConfig(
  { flags }: ParsedRun,
  target: Target & { kind: 'protocol' },
  existing: ExistingFn,
): RunConfigInput['runtime_config'] {
  checkRequest({
    scheme: target.scheme,
    pkg: target.pkg,
    ...(flags.runtimeImage !== undefined ? { builderImage: flags.runtimeImage } : {}),
    additionalPackages: flags.runtimeAddPackage,
    buildWith: flags.buildWith,
  });
  if (flags.runtimeImage !== undefined) baseImages(target.scheme, flags.runtimeImage, {});
  return dropUndefined({
    builder_image: flags.runtimeImage,
    additional_packages: flags.runtimeAddPackage.length > 0 ? flags.runtimeAddPackage : undefined,
    build_with: flags.buildWith.length > 0 ? flags.buildWith : undefined,
    ca_cert_path: existing('ca-cert', flags.caCert),
  });
}
