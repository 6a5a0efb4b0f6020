/**
 * Finding servers in the merged registry: by name (the full reverse-DNS name, or its short name
 * after the `/` when that is unique), by search term, and the closest names for a typo.
 */
import { usageError } from '../util/errors.js';
import { moatSettings, type RegistryServer } from './schema.js';

/** The part of a registry name after the `/` (`io.github.modelcontextprotocol/fetch` → `fetch`). */
export function shortName(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}

/**
 * Merges registries; a later one overrides an earlier one's entry of the same name, so the
 * caller passes the built-in catalog first and the user's registry after it.
 */
export function mergeRegistries(...layers: ReadonlyArray<readonly RegistryServer[]>): RegistryServer[] {
  const byName = new Map<string, RegistryServer>();
  for (const layer of layers) for (const server of layer) byName.set(server.name, server);
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The server a name means: the exact full name, else (for a name without `/`) the one server
 * whose short name it is. Several servers with that short name is a usage error listing them.
 */
export function findServer(servers: readonly RegistryServer[], name: string): RegistryServer | undefined {
  const exact = servers.find((s) => s.name === name);
  if (exact || name.includes('/')) return exact;
  const matches = servers.filter((s) => shortName(s.name) === name);
  if (matches.length > 1) {
    throw usageError(
      `several registry servers are called ${JSON.stringify(name)}: ${matches.map((s) => s.name).join(', ')}; use the full name`,
    );
  }
  return matches[0];
}

/** Servers whose name, title, description or a tag contains the term (case-insensitive). */
export function searchServers(servers: readonly RegistryServer[], term: string): RegistryServer[] {
  const needle = term.toLowerCase();
  return servers.filter((s) =>
    [s.name, s.title ?? '', s.description, ...(moatSettings(s).tags ?? [])].some((text) =>
      text.toLowerCase().includes(needle),
    ),
  );
}

/** Edit distance counting an insertion, deletion, substitution or swap of neighbours as one edit. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => d[i]?.[j] as number;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * Registry names close to a mistyped one (short names compared with short names, full with
 * full), closest first: at most three, by default within a third of the short name's length (at
 * least 2 edits).
 */
export function closestNames(
  servers: readonly RegistryServer[],
  typed: string,
  maxDistance = Math.max(2, Math.floor(shortName(typed).length / 3)),
): string[] {
  const text = typed.toLowerCase();
  const limit = maxDistance;
  return servers
    .map((s) => {
      const candidate = text.includes('/') ? s.name : shortName(s.name);
      return { name: candidate, distance: editDistance(text, candidate.toLowerCase()) };
    })
    .filter((c) => c.distance <= limit)
    .sort((a, b) => a.distance - b.distance || a.name.localeCompare(b.name))
    .slice(0, 3)
    .map((c) => c.name);
}

/**
 * `name@version` → its parts (`fetch@1.2.0`); a name without `@`, or an image digest
 * (`…@sha256:…`), has no version.
 */
export function splitVersion(typed: string): { name: string; version?: string } {
  const match = /^([^@]+)@([^@:/]+)$/.exec(typed);
  return match?.[1] && match[2] ? { name: match[1], version: match[2] } : { name: typed };
}
