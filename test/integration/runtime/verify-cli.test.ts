/**
 * `moat run --image-verification` end to end: an image run by its reference has no registry
 * provenance, so `enabled` refuses it with a clear message and exit 1, before anything is saved;
 * `disabled` runs it. Registry entries with provenance: test/integration/registry/verify-by-name.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { testServerImage } from '../../support/images.js';
import { callTool, moat, moatOk, printedUrl, testMoatHome, workload } from '../../support/moat-cli.js';
import { uniqueName } from '../../support/podman.js';

let image: string;
const home = testMoatHome();

beforeAll(async () => {
  image = await testServerImage('stdio-server');
});

describe('moat run --image-verification', { timeout: 300_000 }, () => {
  it('enabled refuses an image without provenance (exit 1, image named, nothing saved)', async () => {
    const name = uniqueName('verify');
    const result = await moat(home, [
      'run',
      '--transport',
      'stdio',
      '--name',
      name,
      '--image-verification',
      'enabled',
      image,
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `image verification failed for ${image}: no provenance information is known for it`,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(await workload(home, name)).toBeUndefined();
  });

  it('disabled runs it', async () => {
    const name = uniqueName('noverify');
    const url = printedUrl(
      await moatOk(home, [
        'run',
        '--transport',
        'stdio',
        '--name',
        name,
        '--image-verification',
        'disabled',
        image,
      ]),
    );
    expect(await callTool(url, 'echo', { text: 'unverified but allowed' })).toBe('unverified but allowed');
    await moatOk(home, ['rm', name]);
  });
});
