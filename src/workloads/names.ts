/**
 * Workload and group names. A name becomes a file name in the state directories and part of a
 * container name, so only `[A-Za-z0-9._-]` is allowed, at most 100 characters, never `.`/`..`.
 * Default names are derived from the target the way ToolHive does, so the same command gives the
 * same name in both tools.
 */
import { usageError } from '../util/errors.js';

export const NAME_PATTERN = /^[A-Za-z0-9._-]+$/;
export const MAX_NAME_LENGTH = 100;

/** Why a name is not usable as a workload or group name, or undefined when it is fine. */
export function nameProblem(name: string): string | undefined {
  if (name.length === 0) return 'it is empty';
  if (name.length > MAX_NAME_LENGTH) return `it is longer than ${MAX_NAME_LENGTH} characters`;
  if (!NAME_PATTERN.test(name)) return 'only letters, digits, ".", "_" and "-" are allowed';
  if (name.includes('..') || name === '.') return 'it must not be "." or contain ".."';
  return undefined;
}

/** Throws a usage error naming `what` (e.g. `workload name`) when `name` is not allowed. */
export function assertValidName(name: string, what = 'workload name'): string {
  const problem = nameProblem(name);
  if (problem) throw usageError(`invalid ${what} ${JSON.stringify(name)}: ${problem}`);
  return name;
}

/**
 * Makes any string a valid workload name: `..` becomes `--`, leading slashes go, shell
 * metacharacters and other invalid characters become `-`, the result is cut to 100 characters.
 */
export function sanitizeWorkloadName(raw: string): string {
  let name = raw.replaceAll('..', '--').replace(/^[/\\]+/, '');
  name = name.replaceAll('$(', '-').replace(/[^A-Za-z0-9._-]/g, '-');
  name = name.slice(0, MAX_NAME_LENGTH);
  if (name === '' || name === '.') return 'workload';
  return name;
}

/** `https://api.github.com/mcp` → `github`; a single-label host is used as is. */
export function nameFromUrl(url: string): string {
  const labels = new URL(url).hostname.split('.').filter(Boolean);
  return (labels.length >= 2 ? labels[labels.length - 2] : labels[0]) ?? 'remote';
}

/** `ghcr.io/github/github-mcp-server:latest` → `github-github-mcp-server`; `fetch:1` → `fetch`. */
export function nameFromImage(image: string): string {
  const withoutDigest = image.split('@')[0] ?? image;
  const lastSlash = withoutDigest.lastIndexOf('/');
  const lastColon = withoutDigest.lastIndexOf(':');
  const untagged = lastColon > lastSlash ? withoutDigest.slice(0, lastColon) : withoutDigest;
  const parts = untagged.split('/').map((part) => part.replace(/:\d+$/, ''));
  const base = parts.length >= 2 ? `${parts[parts.length - 2]}-${parts[parts.length - 1]}` : (parts[0] ?? '');
  return base.replace(/[^A-Za-z0-9-]/g, '-');
}

/** `npx://@modelcontextprotocol/server-everything` → `modelcontextprotocol-server-everything`. */
export function nameFromPackage(pkg: string): string {
  const name = pkg
    .replace(/^\.\.?\//, '')
    .replace(/[/@.]/g, '-')
    .replace(/^-/, '');
  return name === '' ? 'moat-container' : name;
}
