/**
 * What `moat run <target>` points at, and the workload name derived from it. Detection order
 * and naming follow ToolHive (reference §1.2, §1.3) so the same target gets the same name in
 * both tools; one deliberate difference: a URL whose host is an IP address is named after the
 * whole address (`127-0-0-1`), not after its third octet.
 */
import { isIP } from 'node:net';
import { isLocalGoPath, parseProtocolTarget, type ProtocolScheme } from '../runtime/build/recipe.js';
import { isValidImageRef } from '../runtime/image-ref.js';
import { usageError } from '../util/errors.js';
import { nameFromImage, nameFromPackage, nameFromUrl } from '../workloads/names.js';

export type Target =
  | { kind: 'remote'; url: string; hostname: string }
  | { kind: 'protocol'; scheme: ProtocolScheme; pkg: string; local: boolean; raw: string }
  | { kind: 'image'; ref: string }
  /** `moat group serve <group>`: the group served as one endpoint (never detected from a string). */
  | { kind: 'aggregate'; group: string };

/** Classifies a target: an http(s) URL with a host, a protocol scheme, else an image reference. */
export function detectTarget(raw: string): Target {
  const url = parseHttpUrl(raw);
  if (url) {
    // They would be stored in clear in the RunConfig, logs and `moat list`, and never sent.
    if (url.username !== '' || url.password !== '') {
      throw usageError(
        `target ${url.protocol}//…@${url.host}${url.pathname}: credentials in the URL are refused ` +
          '(they would be stored in clear); pass them with --remote-auth-bearer-token-file or --remote-forward-headers',
      );
    }
    return { kind: 'remote', url: raw, hostname: url.hostname };
  }
  const protocol = parseProtocolTarget(raw);
  if (protocol) {
    const { scheme, pkg } = protocol;
    if (pkg === '') throw usageError(`target ${raw}: a package is missing after ${scheme}://`);
    return { kind: 'protocol', scheme, pkg, local: scheme === 'go' && isLocalGoPath(pkg), raw };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) || !isValidImageRef(raw)) {
    throw usageError(
      `target ${JSON.stringify(raw)} is not an image reference, protocol scheme or http(s) URL ` +
        '(allowed: [registry/]path[:tag][@digest], npx://pkg, uvx://pkg, go://module or go://./path, https://host/path)',
    );
  }
  return { kind: 'image', ref: raw };
}

/** True for a target that may name a registry server: not a URL and not a protocol scheme. */
export function mayBeRegistryName(raw: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:\/\//i.test(raw);
}

function parseHttpUrl(raw: string): URL | undefined {
  if (!/^https?:\/\//i.test(raw)) return undefined;
  try {
    const url = new URL(raw);
    return url.hostname === '' ? undefined : url;
  } catch {
    return undefined;
  }
}

/** The name `moat run` gives a workload when --name is absent (before sanitising). */
export function defaultWorkloadName(target: Target): string {
  switch (target.kind) {
    case 'remote': {
      const host = target.hostname.replace(/^\[|\]$/g, '');
      return isIP(host) ? host.replace(/[^A-Za-z0-9]+/g, '-') : nameFromUrl(target.url);
    }
    case 'protocol':
      return nameFromPackage(target.pkg);
    case 'image':
      return nameFromImage(target.ref);
    case 'aggregate':
      return `${target.group}-aggregate`;
  }
}
