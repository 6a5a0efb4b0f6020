/**
 * Moat's two images, as the tests build them from host parts (test/support/moat-image.ts) in the
 * Containerfile's layout: both run as UID 65532 with no shell; the operator image runs
 * `node dist/cli/main.js` with the whole package, the proxy image `node dist/cli/proxy-main.js`
 * with only what `moat proxy` loads. The Containerfile users build declares the same.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { packageVersion } from '../../../src/cli/version.js';
import { PROXY_UID } from '../../../src/operator/reconcile/deployment.js';
import { UNDICI_PARTS } from '../../../src/util/undici-parts.js';
import {
  IMAGE_UID,
  moatOperatorImage,
  moatProxyImage,
  OPERATOR_ENTRYPOINT,
  PROXY_ENTRYPOINT,
} from '../../support/moat-image.js';
import { podmanCli } from '../../support/podman.js';

const CONTAINERFILE = fileURLToPath(new URL('../../../Containerfile', import.meta.url));
/** The proxy image's size aim (issue 37), in bytes as `podman image inspect` counts them. */
const PROXY_IMAGE_AIM = 120e6;

let operatorImage: string;
let proxyImage: string;
beforeAll(async () => {
  [operatorImage, proxyImage] = await Promise.all([moatOperatorImage(), moatProxyImage()]);
}, 240_000);

interface ImageConfig {
  User?: string;
  Entrypoint?: string[];
}

async function inspect(image: string): Promise<{ Config: ImageConfig; Size: number }> {
  const [inspected] = JSON.parse(await podmanCli(['image', 'inspect', image])) as [
    { Config: ImageConfig; Size: number },
  ];
  return inspected;
}

/** Runs the image with no network (`entrypoint` replaces its own); resolves to stdout, rejects with the failure. */
function runImage(image: string, args: string[], entrypoint?: string): Promise<string> {
  const replaced = entrypoint ? ['--entrypoint', entrypoint] : [];
  return podmanCli(['run', '--rm', '--network', 'none', '--read-only', ...replaced, image, ...args]);
}

/** The lines of the Containerfile's stage `name`, up to the next FROM. */
function containerfileStage(name: string): string {
  const text = readFileSync(CONTAINERFILE, 'utf8');
  const start = text.search(new RegExp(`^FROM \\S+ AS ${name}$`, 'm'));
  expect(start, `the Containerfile has no stage "${name}"`).toBeGreaterThanOrEqual(0);
  const rest = text.slice(start);
  const next = rest.slice(1).search(/^FROM /m);
  return next < 0 ? rest : rest.slice(0, next + 1);
}

describe.each([
  { name: 'operator', image: () => operatorImage, entrypoint: OPERATOR_ENTRYPOINT },
  { name: 'proxy', image: () => proxyImage, entrypoint: PROXY_ENTRYPOINT },
])('the $name image', ({ name, image, entrypoint }) => {
  it('runs as the non-root UID the operator sets, with its entry point', async () => {
    expect(IMAGE_UID).toBe(PROXY_UID);
    const inspected = await inspect(image());
    expect(inspected.Config.User).toBe(`${PROXY_UID}:${PROXY_UID}`);
    expect(inspected.Config.Entrypoint).toEqual(entrypoint);
    console.log(`${name} image ${image()}: ${(inspected.Size / 1e6).toFixed(1)} MB`);
  });

  it('answers `--version` and `proxy --help` as its arguments', async () => {
    expect(await runImage(image(), ['--version'])).toContain(`moat ${packageVersion()}`);
    expect(await runImage(image(), ['proxy', '--help'])).toMatch(/^Usage: moat proxy --config <file>/);
  });

  it('has no shell', async () => {
    const error = await runImage(image(), ['-c', 'true'], '/bin/sh').then(
      () => undefined,
      (err: Error) => err,
    );
    expect(error?.message).toMatch(/\/bin\/sh.*no such file or directory/);
  });

  it('matches what its Containerfile stage declares: the same UID and entry point, no shell', () => {
    const stage = containerfileStage(name);
    expect(stage).toContain(`USER ${PROXY_UID}:${PROXY_UID}`);
    // The Containerfile's Node lives where its distroless base puts it; the file is the same.
    const declared = [
      entrypoint[0]!.replace('/usr/local/bin/node', '/nodejs/bin/node'),
      ...entrypoint.slice(1),
    ];
    expect(stage).toContain(`ENTRYPOINT ${JSON.stringify(declared).replaceAll('","', '", "')}`);
    expect(stage).toMatch(/^FROM gcr\.io\/distroless\/\S+:nonroot AS /);
  });
});

describe('the proxy image', () => {
  it(`holds only the proxy: no operator, no command tree, no @kubernetes/client-node; under ${PROXY_IMAGE_AIM / 1e6} MB`, async () => {
    const error = await runImage(proxyImage, ['operator', '--help']).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(error?.message).toMatch(/this image runs only `moat proxy --config <file>`/);
    // Node resolves (and loads) the modules from the app's folder exactly as the proxy would.
    const resolve = (...modules: string[]) =>
      runImage(
        proxyImage,
        ['-e', `await Promise.all(${JSON.stringify(modules)}.map((m) => import(m)))`],
        PROXY_ENTRYPOINT[0],
      ).then(
        () => 'found',
        (err: Error) =>
          /ERR_MODULE_NOT_FOUND|Cannot find (package|module)/.test(err.message) ? 'missing' : err.message,
      );
    expect(await resolve('@kubernetes/client-node')).toBe('missing');
    // Cedar's loader decompresses its wasm (stored brotli-compressed) and compiles it.
    expect(await resolve('@cedar-policy/cedar-wasm/nodejs')).toBe('found');
    // Of undici, the parts the proxy loads and what they reach; not the package entry.
    expect(await resolve(...UNDICI_PARTS.map((part) => `undici/${part}`))).toBe('found');
    expect(await resolve('undici')).toBe('missing');
    expect((await inspect(proxyImage)).Size).toBeLessThan(PROXY_IMAGE_AIM);
  });

  it('is the Containerfile default target: its last stage', () => {
    const text = readFileSync(CONTAINERFILE, 'utf8');
    expect(text.slice(text.lastIndexOf('\nFROM '))).toMatch(/^\nFROM \S+ AS proxy$/m);
  });
});
