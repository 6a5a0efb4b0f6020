/**
 * `--image-verification warn|enabled|disabled` applied to one image before it runs:
 * `enabled` refuses an image that is not verified against its provenance, `warn` runs it and
 * says why once, `disabled` skips the check.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TrustedRoot } from '@sigstore/protobuf-specs';
import { errorMessage, runtimeError } from '../../util/errors.js';
import { parseImageRef } from '../image-ref.js';
import { log } from '../../util/log.js';
import { moatDirs } from '../../util/paths.js';
import { hasProvenance, type ImageProvenance } from './provenance.js';
import { verifyImage, type VerificationResult } from './verify-image.js';

export type VerificationMode = 'warn' | 'enabled' | 'disabled';

/** Environment variable naming a Sigstore trusted_root.json (a private Sigstore, or an air-gapped copy). */
export const TRUSTED_ROOT_ENV = 'MOAT_SIGSTORE_TRUSTED_ROOT';

/** Where the trusted root is read from: $MOAT_SIGSTORE_TRUSTED_ROOT, else the configuration directory. */
export function trustedRootPath(env: NodeJS.ProcessEnv = process.env): string {
  return env[TRUSTED_ROOT_ENV] || join(moatDirs(env).config, 'sigstore', 'trusted_root.json');
}

/** The trusted root, or why there is none (verification then cannot succeed). */
export function loadTrustedRoot(path: string): TrustedRoot | { missing: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return {
      missing:
        (err as NodeJS.ErrnoException).code === 'ENOENT'
          ? `no Sigstore trusted root at ${path} (set ${TRUSTED_ROOT_ENV} or put trusted_root.json there)`
          : `cannot read the Sigstore trusted root ${path}: ${errorMessage(err)}`,
    };
  }
  try {
    return TrustedRoot.fromJSON(JSON.parse(text));
  } catch (err) {
    return {
      missing: `the Sigstore trusted root ${path} is not valid trusted_root.json: ${errorMessage(err)}`,
    };
  }
}

export interface ImageCheck {
  image: string;
  mode: VerificationMode;
  /** From the image's registry entry; undefined when it has none. */
  provenance: ImageProvenance | undefined;
  /** Prints a warning for the person running the workload (once per call). */
  warn: (message: string) => void;
  env?: NodeJS.ProcessEnv;
}

async function verify(check: ImageCheck, provenance: ImageProvenance): Promise<VerificationResult> {
  const root = loadTrustedRoot(trustedRootPath(check.env));
  if ('missing' in root) return { verified: false, unsigned: false, reason: root.missing };
  try {
    return await verifyImage(check.image, provenance, root);
  } catch (err) {
    return { verified: false, unsigned: false, reason: errorMessage(err) };
  }
}

/**
 * The verified image by digest (`repo@sha256:…`): what runs must be what was verified, not
 * whatever the tag points at by the time of the pull, nor a local copy under the same tag.
 */
export function pinToDigest(image: string, digest: string): string {
  return `${parseImageRef(image).repository}@${digest}`;
}

/**
 * Applies the mode; throws (runtime error, exit 1) only in `enabled` mode. Returns the image to
 * run: pinned to the verified digest when verification succeeded, else the image as given.
 */
export async function checkImageVerification(check: ImageCheck): Promise<string> {
  const { image, mode, provenance } = check;
  if (mode === 'disabled') {
    log().debug({ image }, 'image verification is disabled');
    return image;
  }
  if (!hasProvenance(provenance)) {
    if (mode === 'enabled')
      throw runtimeError(
        `image verification failed for ${image}: no provenance information is known for it (only images ` +
          'from a registry entry with provenance can be verified); use --image-verification warn or disabled to run it',
      );
    // Most images have no registry entry; saying so on every run would drown real warnings.
    log().debug({ image }, 'no provenance information for the image; skipping image verification');
    return image;
  }
  const result = await verify(check, provenance);
  if (result.verified) {
    log().info({ image, digest: result.digest }, 'image signature verified against its provenance');
    return pinToDigest(image, result.digest);
  }
  const why = result.unsigned ? 'the image is not signed' : result.reason;
  if (mode === 'enabled')
    throw runtimeError(
      `image verification failed for ${image}: ${why}; refusing to run it (--image-verification enabled)`,
    );
  check.warn(`image ${image} could not be verified (${why}); running it anyway (--image-verification warn)`);
  return image;
}
