/**
 * The Moat image as the Containerfile at the repository root makes it (Node 24, the built dist/
 * and the production node_modules under /app, UID 65532, entry point `node dist/cli/main.js`, no
 * shell), made here from host parts because tests cannot pull the Node base image: this machine's
 * Node binary and its libraries (the base image of test/support/images.ts), the built dist/, and
 * the packages package-lock.json marks as non-dev, copied from node_modules.
 *
 * Tagged `localhost/mcp-moat:<hash of those inputs>` and built once per machine: later runs and
 * parallel test files reuse it.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_IN_IMAGE } from '../../src/runtime/egress/node-rootfs.js';
import { contentHash } from './cache.js';
import { buildFromContext, nodeBaseImage } from './images.js';
import { ensureBuilt } from './moat-cli.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Where the app lives in the image, as in the Containerfile. */
const APP_DIR = '/app';
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

/** Every file under `dir`, sorted, as paths relative to the repository root. */
function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .sort();
}

/** Copies one package without its nested node_modules (those are separate lockfile entries). */
function copyPackage(path: string, target: string): void {
  cpSync(join(ROOT, path), join(target, path), {
    recursive: true,
    verbatimSymlinks: true,
    filter: (source) => !relative(join(ROOT, path), source).startsWith('node_modules'),
  });
}

/** The image reference; builds it on first use (and dist/ first when it is missing or stale). */
export async function moatImage(): Promise<string> {
  await ensureBuilt();
  const base = await nodeBaseImage();
  const containerfile = [
    `FROM ${base}`,
    `COPY app/ ${APP_DIR}/`,
    `WORKDIR ${APP_DIR}`,
    'ENV NODE_ENV=production',
    `USER ${IMAGE_UID}:${IMAGE_UID}`,
    `ENTRYPOINT ${JSON.stringify([NODE_IN_IMAGE, `${APP_DIR}/dist/cli/main.js`])}`,
    'CMD []',
  ].join('\n');
  const dist = filesUnder('dist');
  const hash = contentHash(
    base,
    containerfile,
    readFileSync(join(ROOT, 'package.json')),
    readFileSync(join(ROOT, 'package-lock.json')),
    ...dist.flatMap((file) => [file, readFileSync(join(ROOT, file))]),
  );
  return buildFromContext(`localhost/mcp-moat:${hash}`, containerfile, (context) => {
    const app = join(context, 'app');
    mkdirSync(app, { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(app, 'package.json'));
    cpSync(join(ROOT, 'dist'), join(app, 'dist'), { recursive: true });
    for (const path of productionPackages()) copyPackage(path, app);
  });
}
