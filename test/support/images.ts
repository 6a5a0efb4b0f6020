/**
 * Small local test images, built without any registry: a root filesystem made from host files
 * (this Node binary and the shared libraries `ldd` lists, minimal /etc, /tmp; the same rootfs
 * Moat uses for its egress proxy image), imported once with `podman import`, then per-test
 * layers added with `podman build --pull=never`. Images are
 * tagged by content hash, so repeated runs and parallel test files reuse them.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import {
  NODE_IN_IMAGE,
  nodeHostFiles,
  nodeHostIdentity,
  nodeRootfsTar,
} from '../../src/runtime/egress/node-rootfs.js';
import { fixtureBundle, type FixtureServer } from '../fixtures/bundle.js';
import { CACHE_DIR, contentHash, withCacheLock } from './cache.js';
import { podmanCli } from './podman.js';

const execFileAsync = promisify(execFile);

export interface NodeImageOptions {
  /** Container path → file content. */
  files?: Record<string, string | Buffer>;
  /** Default: `["/usr/local/bin/node"]`. */
  entrypoint?: string[];
  env?: Record<string, string>;
  /** Extra tag to put on the image (besides its content-hash tag). */
  tag?: string;
}

export async function imageExists(ref: string): Promise<boolean> {
  try {
    await podmanCli(['image', 'exists', ref]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes image `ref` once per machine: `make` runs only when the image is missing, under a cache
 * lock, so parallel test files wait for the first maker instead of racing it. Returns `ref`.
 */
async function makeOnce(ref: string, make: (key: string) => Promise<void>): Promise<string> {
  if (await imageExists(ref)) return ref;
  const key = ref.replace(/[^A-Za-z0-9_.-]/g, '-');
  return withCacheLock(`image-${key}`, async () => {
    if (!(await imageExists(ref))) await make(key);
    return ref;
  });
}

/**
 * Builds `ref` from `containerfile` once per machine, in a fresh context directory that `fill`
 * writes the files into (removed afterwards). Returns `ref`.
 */
export function buildFromContext(
  ref: string,
  containerfile: string,
  fill: (context: string) => void,
): Promise<string> {
  return makeOnce(ref, async (key) => {
    const context = join(CACHE_DIR, `context-${key}-${process.pid}`);
    try {
      mkdirSync(context, { recursive: true });
      fill(context);
      writeFileSync(join(context, 'Containerfile'), containerfile);
      await podmanCli([
        'build',
        '--pull=never',
        '-q',
        '-t',
        ref,
        '-f',
        join(context, 'Containerfile'),
        context,
      ]);
    } finally {
      rmSync(context, { recursive: true, force: true });
    }
  });
}

/** Imports the root filesystem of `hostFiles` (Node first, then its libraries) as image `ref`. */
async function importNodeRootfs(ref: string, hostFiles: readonly string[]): Promise<void> {
  await podmanCli(
    ['import', '--change', `ENTRYPOINT ["${NODE_IN_IMAGE}"]`, '-', ref],
    nodeRootfsTar({}, hostFiles),
  );
}

/** The base image: Node and its libraries, `/tmp`, root and nobody users. Entry point: node. */
export function nodeBaseImage(): Promise<string> {
  const files = nodeHostFiles();
  const ref = `localhost/moat-test-base:${contentHash(...nodeHostIdentity(files))}`;
  return makeOnce(ref, () => importNodeRootfs(ref, files));
}

/**
 * The base image with Node's symbol tables and debug information stripped (binutils' `strip`),
 * as the Containerfile's proxy target does: about 18 MB less, the same program.
 */
export function strippedNodeBaseImage(): Promise<string> {
  const [node, ...libs] = nodeHostFiles();
  const ref = `localhost/moat-test-base-stripped:${contentHash(...nodeHostIdentity([node!, ...libs]))}`;
  return makeOnce(ref, async (key) => {
    const stripped = join(CACHE_DIR, `node-${key}-${process.pid}`);
    try {
      mkdirSync(CACHE_DIR, { recursive: true });
      await execFileAsync('strip', ['-o', stripped, node!]);
      await importNodeRootfs(ref, [stripped, ...libs]);
    } finally {
      rmSync(stripped, { force: true });
    }
  });
}

/** An image with Node, the given files, entry point and environment. Returns its reference. */
export async function buildNodeImage(options: NodeImageOptions = {}): Promise<string> {
  const base = await nodeBaseImage();
  const files = Object.entries(options.files ?? {}).sort(([a], [b]) => a.localeCompare(b));
  const entrypoint = options.entrypoint ?? [NODE_IN_IMAGE];
  const env = Object.entries(options.env ?? {}).sort(([a], [b]) => a.localeCompare(b));
  const containerfile = [
    `FROM ${base}`,
    ...(files.length ? ['COPY files/ /'] : []),
    ...env.map(([k, v]) => `ENV ${k}=${JSON.stringify(v)}`),
    `ENTRYPOINT ${JSON.stringify(entrypoint)}`,
    'CMD []',
  ].join('\n');
  const hash = contentHash(containerfile, ...files.flatMap(([path, content]) => [path, content]));
  const ref = await buildFromContext(`localhost/moat-test:${hash}`, containerfile, (context) => {
    for (const [path, content] of files) {
      const target = join(context, 'files', path);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, content);
    }
  });
  if (options.tag) await podmanCli(['tag', ref, options.tag]);
  return ref;
}

/** Path of the bundled server inside the test server images. */
export const SERVER_PATH = '/app/server.mjs';

/** An image running one of the fixture MCP servers (`test/fixtures/mcp-servers/`). */
export async function testServerImage(
  server: FixtureServer,
  options: Omit<NodeImageOptions, 'files' | 'entrypoint'> = {},
): Promise<string> {
  const bundle = readFileSync(await fixtureBundle(server));
  return buildNodeImage({
    ...options,
    files: { [SERVER_PATH]: bundle },
    entrypoint: [NODE_IN_IMAGE, SERVER_PATH],
  });
}
