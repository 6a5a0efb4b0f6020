/**
 * The base image the protocol-scheme build tests hand to `moat run --runtime-image` (tests
 * cannot pull node/python/golang from Docker Hub): a minimal Debian made by `debootstrap` from
 * the Debian mirror this machine's apt uses, plus this machine's Node 24 and npm, Go from
 * /usr/local/go, and uv from its PyPI wheel. One image serves every ecosystem and both build
 * stages. It holds Debian's CA roots only, not the TLS-inspecting proxy's, so the builds need
 * --ca-cert like any build behind such a proxy.
 *
 * Imported with `podman import`, tagged by a hash of its inputs and built once (about a minute):
 * later runs and parallel test files reuse it.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { nodeHostFiles, nodeHostIdentity } from '../../src/runtime/egress/node-rootfs.js';
import { CACHE_DIR, contentHash, withCacheLock } from './cache.js';
import { podmanEnv } from './podman.js';

const run = promisify(execFile);

/** Bumped when the way the image is put together changes. */
const LAYOUT = '2';
const SUITE = 'bookworm';
const DEBIAN_PACKAGES = 'ca-certificates,git,python3';
/** Pinned, so the image hash (and the cache) does not move with PyPI. */
const UV_VERSION = '0.13.9';
const PYPI_UV = 'https://pypi.org/pypi/uv/json';
const GO_ROOT = '/usr/local/go';
/** The npm on this machine's PATH (the toolchain's Node 24 ships without one): `<root>/bin/npm-cli.js`. */
function npmRoot(): string {
  const npm = execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim();
  return dirname(dirname(realpathSync(npm)));
}
const PATH = '/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The mirror of this machine's apt sources (deb822 or one-line), else deb.debian.org. */
function debianMirror(): string {
  for (const file of ['/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list']) {
    if (!existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    const uri =
      /^URIs:\s*(\S+\/debian)\/?\s*$/m.exec(text)?.[1] ??
      /^deb\s+(?:\[[^\]]*\]\s+)?(\S+\/debian)\/?\s/m.exec(text)?.[1];
    if (uri) return uri;
  }
  return 'http://deb.debian.org/debian';
}

async function imageExists(ref: string): Promise<boolean> {
  return run('podman', ['image', 'exists', ref], { env: podmanEnv() }).then(
    () => true,
    () => false,
  );
}

/** uv's binary from its manylinux wheel on PyPI (curl uses the system CA bundle). */
async function fetchUv(dir: string): Promise<string> {
  const meta = JSON.parse(
    (
      await run('curl', ['-fsSL', '--max-time', '60', PYPI_UV], {
        maxBuffer: 256 * 1024 * 1024,
      })
    ).stdout,
  ) as { releases: Record<string, Array<{ filename: string; url: string }>> };
  const wheel = (meta.releases[UV_VERSION] ?? []).find(
    (u) => /manylinux_2_17_x86_64/.test(u.filename) && u.filename.endsWith('.whl'),
  );
  if (!wheel) throw new Error(`no x86_64 manylinux wheel of uv ${UV_VERSION} on PyPI`);
  const path = join(dir, wheel.filename);
  // PyPI (or a mirror in front of it) may answer with a URL relative to the JSON's.
  await run('curl', ['-fsSL', '--max-time', '300', '-o', path, new URL(wheel.url, PYPI_UV).href]);
  const member = `uv-${UV_VERSION}.data/scripts/uv`;
  await run('python3', [
    '-c',
    'import sys,zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])',
    path,
    member,
    dir,
  ]);
  return join(dir, member);
}

function goVersion(): string {
  return readFileSync(join(GO_ROOT, 'VERSION'), 'utf8').split('\n')[0] ?? '';
}

/** The test builder/runtime image for npx://, uvx:// and go:// builds. */
export async function protocolBaseImage(): Promise<string> {
  const nodeFiles = nodeHostFiles();
  const npmVersion = (
    JSON.parse(readFileSync(join(npmRoot(), 'package.json'), 'utf8')) as { version: string }
  ).version;
  const hash = contentHash(
    LAYOUT,
    SUITE,
    DEBIAN_PACKAGES,
    debianMirror(),
    ...nodeHostIdentity(nodeFiles),
    npmVersion,
    UV_VERSION,
    goVersion(),
    PATH,
  );
  const ref = `localhost/moat-test-protocol-base:${hash}`;
  if (await imageExists(ref)) return ref;
  return withCacheLock(`protocol-base-${hash}`, async () => {
    if (await imageExists(ref)) return ref;
    const work = join(CACHE_DIR, `protocol-base-${hash}-${process.pid}`);
    const root = join(work, 'root');
    mkdirSync(work, { recursive: true });
    try {
      await run(
        'debootstrap',
        ['--variant=minbase', `--include=${DEBIAN_PACKAGES}`, SUITE, root, debianMirror()],
        { timeout: 600_000, maxBuffer: 64 * 1024 * 1024 },
      ).catch((err: Error & { stderr?: string }) => {
        throw new Error(
          `debootstrap failed (install it with scripts/system-deps.sh): ${err.message} ${err.stderr ?? ''}`,
        );
      });
      const local = join(root, 'usr/local');
      cpSync(realpathSync(process.execPath), join(local, 'bin/node'));
      cpSync(npmRoot(), join(local, 'lib/node_modules/npm'), { recursive: true, verbatimSymlinks: true });
      symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(local, 'bin/npm'));
      symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(local, 'bin/npx'));
      cpSync(await fetchUv(work), join(local, 'bin/uv'));
      chmodSync(join(local, 'bin/uv'), 0o755); // zipfile does not keep the mode
      cpSync(GO_ROOT, join(local, 'go'), { recursive: true, verbatimSymlinks: true });
      await importRootfs(root, ref);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    return ref;
  });
}

/** `tar -C root -c . | podman import - ref`, with PATH set for the tools in /usr/local. */
function importRootfs(root: string, ref: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const tar = spawn('tar', ['-C', root, '--numeric-owner', '-cf', '-', '.'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const podman = spawn('podman', ['import', '--change', `ENV PATH=${PATH}`, '-', ref], {
      env: podmanEnv(),
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let errors = '';
    tar.stderr.on('data', (d: Buffer) => (errors += String(d)));
    podman.stderr.on('data', (d: Buffer) => (errors += String(d)));
    tar.stdout.pipe(podman.stdin);
    tar.once('error', reject);
    podman.once('error', reject);
    podman.once('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`podman import of ${ref} failed (${code}): ${errors.trim()}`)),
    );
  });
}
