/**
 * Small local test images, built without any registry: a root filesystem made from host files
 * (this Node binary and the shared libraries `ldd` lists, minimal /etc, /tmp), imported once
 * with `podman import`, then per-test layers added with `podman build --pull=never`. Images are
 * tagged by content hash, so repeated runs and parallel test files reuse them.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fixtureBundle, type FixtureServer } from '../fixtures/bundle.js';
import { CACHE_DIR, contentHash, withCacheLock } from './cache.js';
import { podmanCli } from './podman.js';

const NODE_PATH = '/usr/local/bin/node';

export interface NodeImageOptions {
  /** Container path → file content. */
  files?: Record<string, string | Buffer>;
  /** Default: `["/usr/local/bin/node"]`. */
  entrypoint?: string[];
  env?: Record<string, string>;
  /** Extra tag to put on the image (besides its content-hash tag). */
  tag?: string;
}

async function imageExists(ref: string): Promise<boolean> {
  try {
    await podmanCli(['image', 'exists', ref]);
    return true;
  } catch {
    return false;
  }
}

/** The host's Node binary and the shared libraries it loads. */
function nodeFiles(): string[] {
  const ldd = execFileSync('ldd', [process.execPath], { encoding: 'utf8' });
  const libs = [...ldd.matchAll(/(\/\S+) \(0x/g)].map((m) => m[1]!);
  return [process.execPath, ...libs];
}

/** The base image: Node and its libraries, `/tmp`, root and nobody users. Entry point: node. */
export async function nodeBaseImage(): Promise<string> {
  const files = nodeFiles();
  const identity = files.map((f) => {
    const st = statSync(f);
    return `${f}:${st.size}:${st.mtimeMs}`;
  });
  const ref = `localhost/moat-test-base:${contentHash(...identity)}`;
  if (await imageExists(ref)) return ref;
  return withCacheLock(`image-${ref.split(':')[1]}`, async () => {
    if (await imageExists(ref)) return ref;
    const root = join(CACHE_DIR, `rootfs-${process.pid}-${Date.now()}`);
    try {
      const [node, ...libs] = files;
      mkdirSync(join(root, dirname(NODE_PATH)), { recursive: true });
      copyFileSync(node!, join(root, NODE_PATH));
      for (const lib of libs) {
        mkdirSync(join(root, dirname(lib)), { recursive: true });
        copyFileSync(lib, join(root, lib)); // follows symlinks: the real library lands under the linked name
      }
      mkdirSync(join(root, 'etc'));
      writeFileSync(
        join(root, 'etc/passwd'),
        'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n',
      );
      writeFileSync(join(root, 'etc/group'), 'root:x:0:\nnogroup:x:65534:\n');
      mkdirSync(join(root, 'tmp'));
      chmodSync(join(root, 'tmp'), 0o1777);
      mkdirSync(join(root, 'app'));
      mkdirSync(join(root, 'root'));
      const tar = execFileSync('tar', ['-C', root, '-c', '.'], { maxBuffer: 1024 * 1024 * 1024 });
      await podmanCli(['import', '--change', `ENTRYPOINT ["${NODE_PATH}"]`, '-', ref], tar);
      return ref;
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
}

/** An image with Node, the given files, entry point and environment. Returns its reference. */
export async function buildNodeImage(options: NodeImageOptions = {}): Promise<string> {
  const base = await nodeBaseImage();
  const files = Object.entries(options.files ?? {}).sort(([a], [b]) => a.localeCompare(b));
  const entrypoint = options.entrypoint ?? [NODE_PATH];
  const env = Object.entries(options.env ?? {}).sort(([a], [b]) => a.localeCompare(b));
  const containerfile = [
    `FROM ${base}`,
    ...(files.length ? ['COPY files/ /'] : []),
    ...env.map(([k, v]) => `ENV ${k}=${JSON.stringify(v)}`),
    `ENTRYPOINT ${JSON.stringify(entrypoint)}`,
    'CMD []',
  ].join('\n');
  const hash = contentHash(containerfile, ...files.flatMap(([path, content]) => [path, content]));
  const ref = `localhost/moat-test:${hash}`;
  if (!(await imageExists(ref)))
    await withCacheLock(`image-${hash}`, async () => {
      if (await imageExists(ref)) return;
      const context = join(CACHE_DIR, `context-${hash}-${process.pid}`);
      try {
        for (const [path, content] of files) {
          const target = join(context, 'files', path);
          mkdirSync(dirname(target), { recursive: true });
          writeFileSync(target, content);
        }
        mkdirSync(context, { recursive: true });
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
    entrypoint: [NODE_PATH, SERVER_PATH],
  });
}
