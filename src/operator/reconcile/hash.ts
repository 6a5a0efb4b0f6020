/**
 * A stable hash of any JSON value: object keys are sorted at every depth, so two specs that differ
 * only in key order hash alike, and any change of a value changes the hash. Used for the
 * `configHash` of referenced kinds and for the pod-template checksums that roll the pods.
 */
import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every depth; `undefined` members are dropped as JSON does. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
    }
    return sorted;
  }
  return value;
}

/** 16 hex digits (64 bits) of SHA-256 over the canonical JSON: short enough for an annotation. */
export function configHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex').slice(0, 16);
}
