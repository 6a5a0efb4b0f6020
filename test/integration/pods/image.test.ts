/**
 * The Moat image: the one the tests build from host parts (test/support/moat-image.ts) runs as
 * UID 65532 with no shell and `node dist/cli/main.js` as entry point, so `proxy` and `operator`
 * are its arguments; the Containerfile users build declares the same.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { packageVersion } from '../../../src/cli/version.js';
import { PROXY_UID } from '../../../src/operator/reconcile/deployment.js';
import { IMAGE_UID, moatImage } from '../../support/moat-image.js';
import { podmanCli } from '../../support/podman.js';

const CONTAINERFILE = fileURLToPath(new URL('../../../Containerfile', import.meta.url));

let image: string;
beforeAll(async () => {
  image = await moatImage();
}, 180_000);

interface ImageConfig {
  User?: string;
  Entrypoint?: string[];
  WorkingDir?: string;
}

describe('the Moat image', () => {
  it('runs as the non-root UID the operator sets, with node dist/cli/main.js as entry point', async () => {
    expect(IMAGE_UID).toBe(PROXY_UID);
    const [inspected] = JSON.parse(await podmanCli(['image', 'inspect', image])) as [
      { Config: ImageConfig; Size: number },
    ];
    expect(inspected.Config.User).toBe(`${PROXY_UID}:${PROXY_UID}`);
    expect(inspected.Config.Entrypoint).toEqual(['/usr/local/bin/node', '/app/dist/cli/main.js']);
    console.log(`moat image ${image}: ${(inspected.Size / 1e6).toFixed(0)} MB`);
  });

  it('answers `--version` and `proxy --help` as its arguments', async () => {
    const version = await podmanCli(['run', '--rm', '--network', 'none', image, '--version']);
    expect(version).toContain(`moat ${packageVersion()}`);
    const help = await podmanCli(['run', '--rm', '--network', 'none', image, 'proxy', '--help']);
    expect(help).toMatch(/^Usage: moat proxy --config <file>/);
  });

  it('has no shell', async () => {
    const error = await podmanCli([
      'run',
      '--rm',
      '--network',
      'none',
      '--entrypoint',
      '/bin/sh',
      image,
      '-c',
      'true',
    ]).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(error?.message).toMatch(/\/bin\/sh.*no such file or directory/);
  });

  it('matches what the Containerfile declares for users: distroless Node 24, the same UID and entry point', () => {
    const text = readFileSync(CONTAINERFILE, 'utf8');
    const runtime = text.slice(text.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^\nFROM gcr\.io\/distroless\/nodejs24-debian12:nonroot$/m);
    expect(runtime).toContain(`USER ${PROXY_UID}:${PROXY_UID}`);
    expect(runtime).toContain('ENTRYPOINT ["/nodejs/bin/node", "/app/dist/cli/main.js"]');
    expect(text).toMatch(/npm prune --omit=dev/);
  });
});
