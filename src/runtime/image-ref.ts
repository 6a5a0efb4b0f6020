/** Image reference rules: which references are always pulled, how they read in messages. */

export interface ImageRef {
  /** Repository without tag or digest (`ghcr.io/org/server`). */
  repository: string;
  tag?: string;
  digest?: string;
}

export function parseImageRef(ref: string): ImageRef {
  const at = ref.indexOf('@');
  const digest = at >= 0 ? ref.slice(at + 1) : undefined;
  const named = at >= 0 ? ref.slice(0, at) : ref;
  // A tag is a `:` after the last `/` (a `:` before it belongs to a registry host:port).
  const colon = named.lastIndexOf(':');
  const hasTag = colon > named.lastIndexOf('/');
  return {
    repository: hasTag ? named.slice(0, colon) : named,
    ...(hasTag ? { tag: named.slice(colon + 1) } : {}),
    ...(digest ? { digest } : {}),
  };
}

/**
 * `latest` and untagged references move, so they are pulled on every run (with a fallback to
 * the local copy when the registry is unreachable); fixed tags and digests use a local copy.
 */
export function isFloatingImageRef(ref: string): boolean {
  const parsed = parseImageRef(ref);
  return parsed.digest === undefined && (parsed.tag === undefined || parsed.tag === 'latest');
}

/** Characters an image reference may contain (registry, path, tag, digest). */
const IMAGE_REF = /^[a-z0-9]+(?:[._\-/:@a-zA-Z0-9]*[a-zA-Z0-9])?$/;

export function isValidImageRef(ref: string): boolean {
  return ref.length <= 512 && IMAGE_REF.test(ref);
}
