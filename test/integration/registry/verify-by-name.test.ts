/**
 * `moat run <name> --image-verification enabled` end to end: a user registry file whose oci
 * entries carry provenance (`_meta…["dev.moat"].provenance`) for images on a real OCI registry on
 * loopback, signed cosign-style by a local Sigstore (throwaway CA + transparency-log key, see
 * local-sigstore.ts). The signed image runs pinned to its digest, and `--from-config` of its
 * exported configuration verifies it again from the entry; an unsigned image and one whose
 * signature payload was tampered with are refused before anything is saved.
 *
 * The loopback registry speaks plain HTTP, which the container engine refuses to pull from
 * without `--tls-verify=false`; the images are pulled into Podman beforehand by digest, so
 * `moat run` finds the verified digest locally (verification itself reads the registry).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testServerImage } from '../../support/images.js';
import {
  GITHUB_IDENTITY,
  GITHUB_PROVENANCE,
  SigningFixture,
  tamperedSignature,
} from '../../support/local-sigstore.js';
import { callTool, moat, moatOk, printedUrl, testMoatHome, workload } from '../../support/moat-cli.js';
import { podmanCli, uniqueName } from '../../support/podman.js';

const REPO = 'acme/weather-mcp';
const home = testMoatHome();
let fx: SigningFixture;
let trustEnv: NodeJS.ProcessEnv;
const localImages: string[] = [];
const pushed: Record<'signed' | 'unsigned' | 'tampered', { ref: string; digest: string }> = {
  signed: { ref: '', digest: '' },
  unsigned: { ref: '', digest: '' },
  tampered: { ref: '', digest: '' },
};

const PROVENANCE = GITHUB_PROVENANCE;

/** The test MCP server image with a distinct label (so a distinct digest), pushed as `<REPO>:<tag>`. */
async function pushVariant(base: string, tag: string): Promise<{ ref: string; digest: string }> {
  const dir = mkdtempSync(join(fx.work, `${tag}-`));
  writeFileSync(join(dir, 'Containerfile'), `FROM ${base}\nLABEL moat.test.variant="${uniqueName(tag)}"\n`);
  const local = `localhost/moat-registry-verify:${tag}-${uniqueName('t')}`;
  await podmanCli(['build', '-q', '-t', local, dir]);
  localImages.push(local);
  const ref = await fx.registry.pushImage(local, REPO, tag);
  const digest = await fx.registry.digestOf(REPO, tag);
  await podmanCli(['pull', '-q', '--tls-verify=false', `${fx.registry.host}/${REPO}@${digest}`]);
  return { ref, digest };
}

function registryEntry(variant: keyof typeof pushed): unknown {
  return {
    name: `io.moat-test/${variant}`,
    description: `the test MCP server, ${variant}`,
    packages: [{ registryType: 'oci', identifier: pushed[variant].ref, transport: { type: 'stdio' } }],
    _meta: {
      'io.modelcontextprotocol.registry/publisher-provided': {
        'dev.moat': { permissions: 'none', provenance: PROVENANCE },
      },
    },
  };
}

beforeAll(async () => {
  fx = await SigningFixture.start('moat-registry-verify-');
  trustEnv = fx.trustEnv;
  const base = await testServerImage('stdio-server');
  const repository = `${fx.registry.host}/${REPO}`;

  pushed.signed = await pushVariant(base, 'signed');
  await fx.sign(REPO, pushed.signed.digest);

  pushed.unsigned = await pushVariant(base, 'unsigned');

  // Signed, then the payload altered (another docker-reference) with the old signature kept.
  pushed.tampered = await pushVariant(base, 'tampered');
  await fx.registry.pushSignatures(REPO, pushed.tampered.digest, [
    tamperedSignature(fx.sigstore, repository, pushed.tampered.digest),
  ]);

  const registryFile = join(fx.work, 'registry.json');
  writeFileSync(
    registryFile,
    JSON.stringify({ servers: (['signed', 'unsigned', 'tampered'] as const).map(registryEntry) }),
  );
  await moatOk(home, ['config', 'set-registry', registryFile]);
}, 600_000);

afterAll(async () => {
  const pulled = Object.values(pushed).map((p) => `${fx?.registry.host}/${REPO}@${p.digest}`);
  for (const image of [...localImages, ...pulled])
    await podmanCli(['rmi', '-f', image]).catch(() => undefined);
  await fx?.stop();
});

describe('moat run <registry name> --image-verification enabled', { timeout: 300_000 }, () => {
  it('runs the signed image pinned to its digest; --from-config verifies it again from its entry', async () => {
    expect(await moatOk(home, ['registry', 'info', 'signed'])).toContain(
      `Provenance:  sigstore_url=tuf-repo-cdn.sigstore.dev, repository_uri=${GITHUB_IDENTITY.repositoryUri},`,
    );
    const name = uniqueName('signed');
    const stdout = await moatOk(
      home,
      ['run', '--name', name, '--image-verification', 'enabled', 'signed'],
      trustEnv,
    );
    expect(await callTool(printedUrl(stdout), 'echo', { text: 'verified by name' })).toBe('verified by name');
    const file = join(fx.work, `${name}.json`);
    await moatOk(home, ['export', name, file]);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(saved).toMatchObject({
      image: `${fx.registry.host}/${REPO}@${pushed.signed.digest}`,
      registry_server_name: 'io.moat-test/signed',
      image_verification: 'enabled',
    });
    await moatOk(home, ['rm', name]);

    const again = uniqueName('fromconfig');
    const rerun = await moatOk(home, ['run', '--from-config', file, '--name', again], trustEnv);
    expect(await callTool(printedUrl(rerun), 'echo', { text: 'again' })).toBe('again');
    await moatOk(home, ['rm', again]);

    // Without the trusted root the same file is refused: the entry's provenance was checked.
    const untrusted = await moat(home, ['run', '--from-config', file, '--name', uniqueName('noroot')], {
      MOAT_SIGSTORE_TRUSTED_ROOT: join(fx.work, 'missing.json'),
    });
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toContain(
      `image verification failed for ${String(saved.image)}: no Sigstore trusted root`,
    );
  });

  for (const [variant, why] of [
    ['unsigned', 'the image is not signed'],
    ['tampered', 'the signature does not verify'],
  ] as const) {
    it(`refuses the ${variant} image named by the same kind of entry (exit 1, nothing saved)`, async () => {
      const name = uniqueName(variant);
      const result = await moat(
        home,
        ['run', '--name', name, '--image-verification', 'enabled', variant],
        trustEnv,
      );
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`image verification failed for ${pushed[variant].ref}: `);
      expect(result.stderr).toContain(why);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(await workload(home, name)).toBeUndefined();
    });
  }
});
