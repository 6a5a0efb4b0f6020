/** Image handling on real Podman: local images, floating tags with a failed pull, unknown images. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContainerRuntime, PullProgress } from '../../../src/runtime/types.js';
import { nodeBaseImage } from '../../support/images.js';
import { podmanCli, testRuntime, uniqueName } from '../../support/podman.js';

let runtime: ContainerRuntime;
let base: string;
const tags: string[] = [];

beforeAll(async () => {
  runtime = await testRuntime();
  base = await nodeBaseImage();
});
afterAll(async () => {
  for (const tag of tags) await podmanCli(['untag', base, tag]).catch(() => undefined);
});

async function tagBase(ref: string): Promise<string> {
  await podmanCli(['tag', base, ref]);
  tags.push(ref.includes(':') ? ref : `${ref}:latest`);
  return ref;
}

describe('ensureImage', () => {
  it('uses a local image with a fixed tag without pulling', async () => {
    const progress: PullProgress[] = [];
    const result = await runtime.ensureImage(base, { onProgress: (p) => progress.push(p) });
    expect(result).toEqual({ id: await runtime.findImage(base), source: 'local' });
    expect(result.id).toMatch(/^(sha256:)?[0-9a-f]{64}$/);
    expect(progress.map((p) => p.phase)).toEqual(['check', 'done']);
    expect(progress.some((p) => p.phase === 'pull')).toBe(false);
  });

  it.each(['latest', 'untagged'])(
    'tries to pull a %s reference and falls back to the local copy when the registry is unreachable',
    async (kind) => {
      const name = `localhost/${uniqueName('moat-float')}`;
      const ref = kind === 'latest' ? await tagBase(`${name}:latest`) : await tagBase(name);
      const progress: PullProgress[] = [];
      const result = await runtime.ensureImage(ref, { onProgress: (p) => progress.push(p) });
      expect(result.source).toBe('local');
      expect(progress.some((p) => p.phase === 'pull' && p.message === `Pulling ${ref}...`)).toBe(true);
      expect(progress.at(-1)).toMatchObject({
        phase: 'done',
        message: expect.stringMatching(new RegExp(`^Could not pull ${ref} \\(.+\\); using the local copy$`)),
      });
    },
  );

  it('names an image found neither locally nor in a registry', async () => {
    const ref = `localhost/${uniqueName('moat-missing')}:1.0`;
    const error = await runtime.ensureImage(ref).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toMatchObject({ kind: 'runtime', exitCode: 1 });
    expect((error as Error).message).toMatch(
      new RegExp(
        `^image ${ref} was not found locally and could not be pulled: .+Check the image name and tag`,
      ),
    );
    expect(await runtime.findImage(ref)).toBeUndefined();
  });

  it('creating a container from a missing image is a clear error', async () => {
    const ref = `localhost/${uniqueName('moat-missing')}:1.0`;
    await expect(
      runtime.createContainer({
        name: uniqueName('moat-noimg'),
        image: ref,
        cmd: [],
        env: {},
        labels: {},
        mounts: [],
        ports: [],
        networkMode: 'none',
        attachStdio: false,
        privileged: false,
        capDrop: ['ALL'],
        securityOpt: ['no-new-privileges'],
      }),
    ).rejects.toMatchObject({
      kind: 'runtime',
      message: expect.stringContaining(`image ${ref} is not available locally`),
    });
  });
});
