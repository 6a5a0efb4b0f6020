/**
 * Image verification against a real OCI registry on loopback: tiny images built with Podman and
 * pushed there, signed cosign-style by a local Sigstore (throwaway CA + transparency-log key,
 * see local-sigstore.ts), then checked in the three modes. Attacks: an unsigned image, a
 * tampered signature payload, a valid signature copied onto another image, a signer from
 * another repository, a signer the trust root does not know.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkImageVerification, type VerificationMode } from '../../../src/runtime/verify/policy.js';
import type { ImageProvenance } from '../../../src/runtime/verify/provenance.js';
import {
  GITHUB_IDENTITY,
  GITHUB_PROVENANCE,
  LocalSigstore,
  SigningFixture,
  simpleSigningPayload,
  tamperedSignature,
} from '../../support/local-sigstore.js';
import type { OciRegistry } from '../../support/oci-registry.js';
import { podmanCli, testRuntime, uniqueName } from '../../support/podman.js';

const REPO = 'acme/weather-mcp';
let fx: SigningFixture;
let registry: OciRegistry;
let sigstore: LocalSigstore;
let work: string;
let trustEnv: NodeJS.ProcessEnv;
const localImages: string[] = [];
const ref: Record<'signed' | 'unsigned' | 'tampered' | 'copied' | 'foreign' | 'untrusted', string> = {
  signed: '',
  unsigned: '',
  tampered: '',
  copied: '',
  foreign: '',
  untrusted: '',
};

const PROVENANCE = GITHUB_PROVENANCE;

/** A tiny distinct image (one file FROM scratch), pushed as `<REPO>:<tag>`. */
async function pushTinyImage(tag: string): Promise<{ ref: string; digest: string }> {
  const dir = mkdtempSync(join(work, `${tag}-`));
  writeFileSync(join(dir, 'marker'), `${tag} ${uniqueName('image')}`);
  writeFileSync(join(dir, 'Containerfile'), 'FROM scratch\nCOPY marker /marker\n');
  const local = `localhost/moat-verify-test:${tag}-${uniqueName('t')}`;
  await podmanCli(['build', '-q', '-t', local, dir]);
  localImages.push(local);
  const pushed = await registry.pushImage(local, REPO, tag);
  return { ref: pushed, digest: await registry.digestOf(REPO, tag) };
}

function sign(digest: string, identity = GITHUB_IDENTITY, by = sigstore): Promise<void> {
  return fx.sign(REPO, digest, identity, by);
}

beforeAll(async () => {
  fx = await SigningFixture.start('moat-verify-');
  ({ work, registry, sigstore } = fx);
  trustEnv = { ...process.env, ...fx.trustEnv };

  const signed = await pushTinyImage('signed');
  await sign(signed.digest);
  ref.signed = signed.ref;

  ref.unsigned = (await pushTinyImage('unsigned')).ref;

  // Signed, then the payload altered (a different docker-reference) with the old signature kept.
  const tampered = await pushTinyImage('tampered');
  await registry.pushSignatures(REPO, tampered.digest, [
    tamperedSignature(sigstore, `${registry.host}/${REPO}`, tampered.digest),
  ]);
  ref.tampered = tampered.ref;

  // A valid signature for the signed image, copied next to another image.
  const copied = await pushTinyImage('copied');
  const signedPayload = simpleSigningPayload(`${registry.host}/${REPO}`, signed.digest);
  await registry.pushSignatures(REPO, copied.digest, [
    { payload: signedPayload, annotations: sigstore.signPayload(signedPayload, GITHUB_IDENTITY) },
  ]);
  ref.copied = copied.ref;

  const foreign = await pushTinyImage('foreign');
  await sign(foreign.digest, {
    ...GITHUB_IDENTITY,
    san: 'https://github.com/mallory/fork/.github/workflows/release.yml@refs/tags/v1.0.0',
    repositoryUri: 'https://github.com/mallory/fork',
  });
  ref.foreign = foreign.ref;

  const stranger = new LocalSigstore();
  const untrusted = await pushTinyImage('untrusted');
  await sign(untrusted.digest, GITHUB_IDENTITY, stranger);
  stranger.cleanup();
  ref.untrusted = untrusted.ref;
}, 180_000);

afterAll(async () => {
  for (const image of [...localImages, ...Object.values(ref)])
    if (image) await podmanCli(['rmi', '-f', image]).catch(() => undefined);
  await fx?.stop();
});

/** Runs the check; returns the warnings it printed, or the error it threw. */
async function check(
  image: string,
  mode: VerificationMode,
  provenance: ImageProvenance | undefined = PROVENANCE,
  env: NodeJS.ProcessEnv = trustEnv,
): Promise<{ warnings: string[]; error?: Error }> {
  const warnings: string[] = [];
  try {
    await checkImageVerification({ image, mode, provenance, env, warn: (m) => warnings.push(m) });
    return { warnings };
  } catch (err) {
    return { warnings, error: err as Error };
  }
}

describe('image verification against a loopback registry', () => {
  it('a signed image with matching provenance passes silently in every mode', async () => {
    for (const mode of ['enabled', 'warn', 'disabled'] as const)
      expect(await check(ref.signed, mode)).toEqual({ warnings: [] });
  });

  it('an unsigned image: enabled refuses naming the image, warn warns once and runs, disabled skips', async () => {
    const enabled = await check(ref.unsigned, 'enabled');
    expect(enabled.error).toMatchObject({ exitCode: 1 });
    expect(enabled.error?.message).toBe(
      `image verification failed for ${ref.unsigned}: the image is not signed; refusing to run it (--image-verification enabled)`,
    );
    expect(await check(ref.unsigned, 'warn')).toEqual({
      warnings: [
        `image ${ref.unsigned} could not be verified (the image is not signed); running it anyway (--image-verification warn)`,
      ],
    });
    expect(await check(ref.unsigned, 'disabled')).toEqual({ warnings: [] });
  });

  it('a tampered signature payload is refused (signature check fails)', async () => {
    const enabled = await check(ref.tampered, 'enabled');
    expect(enabled.error?.message).toBe(
      `image verification failed for ${ref.tampered}: the signature does not verify (TLOG_BODY_ERROR: digest mismatch); ` +
        'refusing to run it (--image-verification enabled)',
    );
    const warn = await check(ref.tampered, 'warn');
    expect(warn.error).toBeUndefined();
    expect(warn.warnings).toHaveLength(1);
    expect(warn.warnings[0]).toContain('could not be verified');
    expect(await check(ref.tampered, 'disabled')).toEqual({ warnings: [] });
  });

  it('a valid signature copied from another image does not vouch for this one', async () => {
    const { error } = await check(ref.copied, 'enabled');
    expect(error?.message).toMatch(/the signature is for sha256:[0-9a-f]{64}, not sha256:[0-9a-f]{64}/);
  });

  it('a signer from another repository does not match the provenance', async () => {
    const { error } = await check(ref.foreign, 'enabled');
    expect(error?.message).toContain(
      'image provenance does not match: repository_uri is "https://github.com/mallory/fork", expected "https://github.com/acme/weather-mcp"',
    );
    // Each provenance field is checked: a wrong issuer alone fails the genuine image too.
    const wrongIssuer = await check(ref.signed, 'enabled', {
      ...PROVENANCE,
      cert_issuer: 'https://accounts.google.com',
    });
    expect(wrongIssuer.error?.message).toContain(
      'cert_issuer is "https://token.actions.githubusercontent.com"',
    );
    const wrongWorkflow = await check(ref.signed, 'enabled', {
      ...PROVENANCE,
      signer_identity: '/.github/workflows/other.yml',
    });
    expect(wrongWorkflow.error?.message).toContain('signer identity is');
  });

  it('a certificate from a CA the trust root does not know is refused', async () => {
    const { error } = await check(ref.untrusted, 'enabled');
    expect(error?.message).toContain(
      `image verification failed for ${ref.untrusted}: the signature does not verify (CERTIFICATE_ERROR: Failed to verify certificate chain)`,
    );
  });

  it('without provenance (no registry entry, or an empty one): enabled refuses, warn and disabled run without a warning', async () => {
    const enabled = await check(ref.signed, 'enabled', {});
    expect(enabled.error?.message).toContain('no provenance information is known for it');
    expect(await check(ref.signed, 'warn', {})).toEqual({ warnings: [] });
    expect(await check(ref.signed, 'disabled', {})).toEqual({ warnings: [] });
  });

  it('a verified image is pinned to the verified digest, and that pulls through the engine API', async () => {
    const pinned = await checkImageVerification({
      image: ref.signed,
      mode: 'enabled',
      provenance: PROVENANCE,
      env: trustEnv,
      warn: () => undefined,
    });
    expect(pinned).toBe(`${registry.host}/${REPO}@${await registry.digestOf(REPO, 'signed')}`);
    // Unverified images keep their reference.
    expect(await check(ref.unsigned, 'warn')).toMatchObject({ warnings: [expect.any(String)] });
    await podmanCli(['rmi', '-f', ref.signed]).catch(() => undefined);
    const runtime = await testRuntime();
    expect(await runtime.ensureImage(pinned)).toMatchObject({ source: 'pulled' });
    expect(await runtime.findImage(pinned)).toBeDefined();
  });

  it('without a trusted root nothing verifies, and the message says where one is expected', async () => {
    const env = { ...process.env, MOAT_SIGSTORE_TRUSTED_ROOT: join(work, 'missing.json') };
    const warn = await check(ref.signed, 'warn', PROVENANCE, env);
    expect(warn.warnings[0]).toContain(`no Sigstore trusted root at ${join(work, 'missing.json')}`);
    expect((await check(ref.signed, 'enabled', PROVENANCE, env)).error?.message).toContain(
      'no Sigstore trusted root',
    );
  });
});
