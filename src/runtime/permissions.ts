/**
 * Permission profiles (ToolHive's format): which host paths a server may read or write, what
 * network it gets, whether it runs privileged. Builtins `none` (alias `stdio`) and `network`,
 * or a JSON file (validated by config/permission-profile.ts).
 *
 * Moat differs from ToolHive on purpose where ToolHive is permissive: a profile without a
 * `network` section gets NO outbound access (least privilege), and outbound allowlists are
 * enforced whatever the isolation flag says (ToolHive drops them with --isolate-network=false).
 */
import { isAbsolute, resolve } from 'node:path';
import type { PermissionProfile } from '../config/runconfig.js';
import { notImplemented, usageError } from '../util/errors.js';

const BUILTIN_PROFILES: Readonly<Record<string, PermissionProfile>> = {
  none: { name: 'none', network: { outbound: {}, inbound: {} } },
  network: { name: 'network', network: { outbound: { insecure_allow_all: true }, inbound: {} } },
};
const ALIASES: Readonly<Record<string, string>> = { stdio: 'none' };

export function builtinProfile(name: string): PermissionProfile | undefined {
  const profile = BUILTIN_PROFILES[ALIASES[name] ?? name];
  return profile && structuredClone(profile);
}

// ---------------------------------------------------------------------------------------------
// Mounts

export interface MountRequest {
  source: string;
  target: string;
  readOnly: boolean;
}

/** Shell metacharacters and NUL: never valid in a mount path (they only appear in injection attempts). */
const FORBIDDEN = /[$&;|`\0]/;

function checkPath(path: string, what: string, declaration: string): void {
  if (path === '') throw usageError(`mount ${JSON.stringify(declaration)}: empty ${what} path`);
  if (FORBIDDEN.test(path))
    throw usageError(
      `mount ${JSON.stringify(declaration)}: the ${what} path contains a forbidden character ($ & ; | \` or NUL)`,
    );
}

/**
 * A profile `read`/`write` entry: `path` (same path inside), `host:container`. Relative host
 * paths are resolved against `cwd`. Resource URIs (`scheme://…`) are not supported yet.
 */
export function parseMountDeclaration(declaration: string, readOnly: boolean, cwd: string): MountRequest {
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(declaration))
    throw notImplemented(`mounting resource URIs (${declaration})`);
  const parts = declaration.split(':');
  if (parts.length > 2)
    throw usageError(`mount ${JSON.stringify(declaration)}: expected host-path or host-path:container-path`);
  const [host = '', container = host] = parts;
  checkPath(host, 'host', declaration);
  checkPath(container, 'container', declaration);
  if (!isAbsolute(container))
    throw usageError(`mount ${JSON.stringify(declaration)}: the container path must be absolute`);
  return { source: resolve(cwd, host), target: container, readOnly };
}

/** A `-v host:container[:ro]` value. */
export function parseVolume(volume: string, cwd: string): MountRequest {
  const readOnly = volume.endsWith(':ro');
  const body = readOnly ? volume.slice(0, -':ro'.length) : volume.replace(/:rw$/, '');
  if (body.split(':').length !== 2)
    throw usageError(`-v ${JSON.stringify(volume)}: expected host-path:container-path[:ro]`);
  return parseMountDeclaration(body, readOnly, cwd);
}

/**
 * All mounts of a profile plus `-v` volumes, one per container path. The same host path
 * declared twice is merged (read-write wins); two host paths on one target are an error.
 */
export function collectMounts(
  profile: PermissionProfile,
  volumes: readonly string[],
  cwd: string,
): MountRequest[] {
  const requests = [
    ...(profile.read ?? []).map((d) => parseMountDeclaration(d, true, cwd)),
    ...(profile.write ?? []).map((d) => parseMountDeclaration(d, false, cwd)),
    ...volumes.map((v) => parseVolume(v, cwd)),
  ];
  const byTarget = new Map<string, MountRequest>();
  for (const request of requests) {
    const existing = byTarget.get(request.target);
    if (!existing) byTarget.set(request.target, { ...request });
    else if (existing.source !== request.source)
      throw usageError(
        `two mounts target ${request.target} (${existing.source} and ${request.source}); each container path can be mounted once`,
      );
    else existing.readOnly &&= request.readOnly;
  }
  return [...byTarget.values()];
}

// ---------------------------------------------------------------------------------------------
// Network

/** What the profile allows out of the container. */
export type OutboundPolicy =
  | { kind: 'allow-all' }
  | { kind: 'deny-all' }
  /** Only through the egress proxy, to these hosts and ports (an empty list allows any). */
  | { kind: 'allowlist'; allowHosts: string[]; allowPorts: number[] };

/** Host allowlist entries: a hostname or IP, or `.domain` for a domain and its subdomains. */
const ALLOW_HOST =
  /^\.?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$|^[\d.]+$|^\[?[\da-fA-F:]+\]?$/;

export function outboundPolicy(profile: PermissionProfile): OutboundPolicy {
  const outbound = profile.network?.outbound;
  if ((profile.network?.inbound?.allow_host ?? []).length > 0)
    throw notImplemented('inbound host allowlists in permission profiles (network.inbound.allow_host)');
  if (outbound?.insecure_allow_all) return { kind: 'allow-all' };
  const allowHosts = outbound?.allow_host ?? [];
  const allowPorts = outbound?.allow_port ?? [];
  if (allowHosts.length === 0 && allowPorts.length === 0) return { kind: 'deny-all' };
  for (const host of allowHosts)
    if (!ALLOW_HOST.test(host))
      throw usageError(
        `permission profile: network.outbound.allow_host entry ${JSON.stringify(host)} is not a hostname, ` +
          '.domain (domain and subdomains) or IP address',
      );
  return { kind: 'allowlist', allowHosts, allowPorts };
}

/** `bridge` for the default network, else the mode as given (`host`, `none`, a network name). */
export function networkModeOf(profile: PermissionProfile): string {
  const mode = profile.network?.mode ?? '';
  return mode === '' || mode === 'default' ? 'bridge' : mode;
}
