/**
 * What `moat run <target>` points at, and the workload name derived from it. Detection order
 * and naming follow ToolHive (reference §1.2, §1.3) so the same target gets the same name in
 * both tools; one deliberate difference: a URL whose host is an IP address is named after the
 * whole address (`127-0-0-1`), not after its third octet.
 */
import { isIP } from 'node:net';
import { isValidImageRef } from '../runtime/image-ref.js';
import { usageError } from '../util/errors.js';
import { nameFromImage, nameFromPackage, nameFromUrl } from '../workloads/names.js';

export const PROTOCOL_SCHEMES = ['uvx', 'npx', 'go'] as const;
export type ProtocolScheme = (typeof PROTOCOL_SCHEMES)[number];

export type Target =
  | { kind: 'remote'; url: string; hostname: string }
  | { kind: 'protocol'; scheme: ProtocolScheme; pkg: string; local: boolean; raw: string }
  | { kind: 'image'; ref: string };

/** Classifies a target: an http(s) URL with a host, a protocol scheme, else an image reference. */
export function detectTarget(raw: string): Target {
  const url = parseHttpUrl(raw);
  if (url) return { kind: 'remote', url: raw, hostname: url.hostname };
  const scheme = PROTOCOL_SCHEMES.find((s) => raw.startsWith(`${s}://`));
  if (scheme) {
    const pkg = raw.slice(scheme.length + 3);
    if (pkg === '') throw usageError(`target ${raw}: a package is missing after ${scheme}://`);
    return { kind: 'protocol', scheme, pkg, local: isLocalPackage(scheme, pkg), raw };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) || !isValidImageRef(raw)) {
    throw usageError(
      `target ${JSON.stringify(raw)} is not an image reference or http(s) URL ` +
        '(allowed: [registry/]path[:tag][@digest], https://host/path)',
    );
  }
  return { kind: 'image', ref: raw };
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

/** A go:// package that is a local path (`.`, `./x`, `../x`, `/x`) builds the local project. */
function isLocalPackage(scheme: ProtocolScheme, pkg: string): boolean {
  return (
    scheme === 'go' && (pkg === '.' || pkg.startsWith('./') || pkg.startsWith('../') || pkg.startsWith('/'))
  );
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
  }
}
