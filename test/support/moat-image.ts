/**
 * Moat's two images as the Containerfile at the repository root makes them (targets `operator` and
 * `proxy`), made here from host parts because tests cannot pull base images: this machine's Node
 * binary and its libraries (the base images of test/support/images.ts), UID 65532, no shell.
 *
 * - The operator image: the built dist/ and the packages package-lock.json marks as non-dev,
 *   copied from node_modules; entry point `node /app/dist/cli/main.js` (`operator …`).
 * - The proxy image: what scripts/bundle-proxy.ts writes (the bundle of `moat proxy` and the few
 *   packages it loads by name) on Node without debug symbols; entry point
 *   `node /app/dist/cli/proxy-main.js` (`proxy --config …`, the operator's pods' arguments).
 *
 * Each is tagged by a hash of its inputs (`localhost/mcp-moat-operator:<hash>`,
 * `localhost/mcp-moat:<hash>`) and built once per machine: later runs and parallel test files
 * reuse it.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_IN_IMAGE } from '../../src/runtime/egress/node-rootfs.js';
import { bundleProxy, PROXY_BUNDLE_DIR, PROXY_ENTRY } from '../../scripts/bundle-proxy.js';
import { CACHE_DIR, contentHash } from './cache.js';
import { buildFromContext, nodeBaseImage, strippedNodeBaseImage } from './images.js';
import { ensureBuilt } from './moat-cli.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Where the app lives in the images, as in the Containerfile. */
const APP_DIR = '/app';
/** The entry points of the images, as in the Containerfile. */
export const OPERATOR_ENTRYPOINT = [NODE_IN_IMAGE, `${APP_DIR}/dist/cli/main.js`];
export const PROXY_ENTRYPOINT = [NODE_IN_IMAGE, `${APP_DIR}/${PROXY_BUNDLE_DIR}/${PROXY_ENTRY}`];
/** The non-root identity of the Containerfile and of the operator's pod security context. */
export const IMAGE_UID = 65532;

interface LockPackage {
  dev?: boolean;
  link?: boolean;
}

/** `node_modules/...` paths of the packages a production install has (what `npm prune --omit=dev` keeps). */
function productionPackages(): string[] {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockPackage>;
  };
  return Object.entries(lock.packages)
    .filter(([path, pkg]) => path.startsWith('node_modules/') && !pkg.dev && !pkg.link)
    .map(([path]) => path)
    .filter((path) => existsSync(join(ROOT, path))); // optional packages for other platforms are absent
}

/** Every file under `dir`, sorted, as paths relative to `base` (default: the repository root). */
function filesUnder(dir: string, base = ROOT): string[] {
  return readdirSync(join(base, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(base, join(entry.parentPath, entry.name)))
    .sort();
}

/** The Containerfile lines after FROM that both images share: the app in APP_DIR, non-root. */
function appLayer(entrypoint: readonly string[]): string[] {
  return [
    `COPY app/ ${APP_DIR}/`,
    `WORKDIR ${APP_DIR}`,
    'ENV NODE_ENV=production',
    `USER ${IMAGE_UID}:${IMAGE_UID}`,
    `ENTRYPOINT ${JSON.stringify(entrypoint)}`,
    'CMD []',
  ];
}

/** Copies one package without its nested node_modules (those are separate lockfile entries). */
function copyPackage(path: string, target: string): void {
  cpSync(join(ROOT, path), join(target, path), {
    recursive: true,
    verbatimSymlinks: true,
    filter: (source) => !relative(join(ROOT, path), source).startsWith('node_modules'),
  });
}

/** The operator image's reference; builds it on first use (and dist/ first when it is missing or stale). */
export async function moatOperatorImage(): Promise<string> {
  await ensureBuilt();
  const base = await nodeBaseImage();
  const containerfile = [`FROM ${base}`, ...appLayer(OPERATOR_ENTRYPOINT)].join('\n');
  const dist = filesUnder('dist');
  const hash = contentHash(
    base,
    containerfile,
    readFileSync(join(ROOT, 'package.json')),
    readFileSync(join(ROOT, 'package-lock.json')),
    ...dist.flatMap((file) => [file, readFileSync(join(ROOT, file))]),
  );
  return buildFromContext(`localhost/mcp-moat-operator:${hash}`, containerfile, (context) => {
    const app = join(context, 'app');
    mkdirSync(app, { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(app, 'package.json'));
    cpSync(join(ROOT, 'dist'), join(app, 'dist'), { recursive: true });
    for (const path of productionPackages()) copyPackage(path, app);
  });
}

/** The proxy image's reference; bundles the proxy (a few seconds) and builds the image when that changed. */
export async function moatProxyImage(): Promise<string> {
  const base = await strippedNodeBaseImage();
  const containerfile = [`FROM ${base}`, ...appLayer(PROXY_ENTRYPOINT)].join('\n');
  const bundle = join(CACHE_DIR, `proxy-bundle-${process.pid}`);
  try {
    await bundleProxy(bundle);
    const files = filesUnder('.', bundle);
    const hash = contentHash(
      base,
      containerfile,
      ...files.flatMap((file) => [file, readFileSync(join(bundle, file))]),
    );
    return await buildFromContext(`localhost/mcp-moat:${hash}`, containerfile, (context) => {
      cpSync(bundle, join(context, 'app'), { recursive: true });
    });
  } finally {
    rmSync(bundle, { recursive: true, force: true });
  }
}
