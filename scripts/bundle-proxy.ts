/**
 * The proxy image's app (Containerfile, target `proxy`; test/support/moat-image.ts): what `moat
 * proxy` runs and nothing else. `npm run bundle:proxy -- <out dir>` or `bundleProxy(outDir)`.
 *
 * esbuild bundles the proxy's entry point (src/cli/proxy-main.ts) and the telemetry worker from
 * the sources, with only the modules they import: the operator, the command tree and
 * @kubernetes/client-node are left out because nothing the proxy runs imports them. Dynamic
 * imports become chunks loaded when first imported, so what an unconfigured policy would load
 * stays on disk (OTel, the Redis client). The layout keeps the paths the code resolves from its
 * own location: entry, worker and chunks in dist/cli/ (`./worker.js` of the telemetry link,
 * `../../package.json` of the version line), packages in node_modules/.
 *
 * RUNTIME_PACKAGES are copied as packages, not bundled, because they are loaded in ways a bundler
 * cannot follow: Cedar's wasm file is read from beside its module; pino, yaml and undici's
 * internal modules are required by name at run time (src/util/log.ts, src/config/inputs.ts,
 * src/util/undici-parts.ts). Their production dependencies come along. Of each package only
 * what a program can load is copied (nothing of `neverLoaded`'s docs, type declarations, source
 * maps, tests and tool configs); of undici only the files its parts in src/util/undici-parts.ts
 * reach (esbuild follows their require() calls; the fetch, WebSocket, cache and mock modules stay
 * out, about half the package). Cedar's 4.3 MB wasm is stored brotli-compressed (0.94 MB) and
 * its loader rewritten to decompress it when the proxy loads Cedar (13–30 ms, once; see
 * docs/performance.md, "The proxy image").
 */
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { brotliCompressSync, constants as zlib } from 'node:zlib';
import { build } from 'esbuild';
import { UNDICI_PARTS } from '../src/util/undici-parts.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** Where the entry and its chunks go, under the output folder (as `dist/` of the npm package). */
export const PROXY_BUNDLE_DIR = 'dist/cli';
/** The entry point's file name in PROXY_BUNDLE_DIR. */
export const PROXY_ENTRY = 'proxy-main.js';

/**
 * What of a package the proxy loads: `paths` copied (folders whole, less `neverLoaded`), or
 * `reach`: modules whose require() graph is followed, each file reached copied (with the package's
 * package.json and LICENSE). A package without an entry here (a dependency) is copied whole, less
 * `neverLoaded`.
 */
type PackagePick = { paths: string[] } | { reach: readonly string[] };

/**
 * Package name → what the proxy loads of it. The web and bundler builds of Cedar's wasm stay out
 * (its nodejs/package.json stays: it makes the loader CommonJS).
 */
const RUNTIME_PACKAGES: Record<string, PackagePick> = {
  '@cedar-policy/cedar-wasm': {
    paths: ['package.json', 'nodejs/package.json', 'nodejs/cedar_wasm.js', 'nodejs/cedar_wasm_bg.wasm'],
  },
  pino: { paths: ['package.json', 'LICENSE', 'pino.js', 'lib'] },
  yaml: { paths: ['package.json', 'LICENSE', 'dist'] },
  undici: { reach: UNDICI_PARTS },
};

/** Top folders of a package that hold no module a program loads. */
const NEVER_LOADED_DIRS = new Set([
  '.github',
  '__tests__',
  'bench',
  'benchmark',
  'benchmarks',
  'docs',
  'example',
  'examples',
  'fixtures',
  'test',
  'tests',
]);

/**
 * Whether a file (its path inside its package) is one no program loads: docs, type declarations,
 * TypeScript sources (Node strips no types under node_modules), source maps, tests, tool configs.
 */
function neverLoaded(path: string): boolean {
  const name = basename(path);
  return (
    NEVER_LOADED_DIRS.has(path.split('/')[0]!) ||
    /\.(md|markdown|map|ts|mts|cts)$/i.test(name) ||
    /^(tsconfig.*\.json|eslint\.config\.[cm]?js|\.eslintrc.*|\.prettierrc.*|\.taprc|\.npmignore|\.editorconfig)$/.test(
      name,
    )
  );
}

interface PackageJson {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

/** The folder of package `name` as Node resolves it from `fromDir` (nearest node_modules up). */
function packageDir(name: string, fromDir: string): string | undefined {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === ROOT || dir === dirname(dir)) return undefined;
  }
}

/** RUNTIME_PACKAGES and their dependencies, as folders under ROOT/node_modules (missing optional ones skipped). */
function runtimePackageDirs(): Map<string, PackagePick | undefined> {
  const out = new Map<string, PackagePick | undefined>();
  const visit = (name: string, fromDir: string, pick: PackagePick | undefined, optional: boolean) => {
    const dir = packageDir(name, fromDir);
    if (dir === undefined) {
      if (optional) return;
      throw new Error(`bundle-proxy: package ${name} is not installed (run npm ci)`);
    }
    if (out.has(dir)) return;
    out.set(dir, pick);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(dep, dir, undefined, false);
    for (const dep of Object.keys(pkg.optionalDependencies ?? {})) visit(dep, dir, undefined, true);
  };
  for (const [name, pick] of Object.entries(RUNTIME_PACKAGES)) visit(name, ROOT, pick, false);
  return out;
}

/** The files of the package in `dir` that its modules `entries` reach through require(), as paths inside it. */
async function reachedFiles(dir: string, entries: readonly string[]): Promise<string[]> {
  const { metafile } = await build({
    absWorkingDir: ROOT,
    entryPoints: entries.map((entry) => join(dir, entry)),
    bundle: true,
    write: false,
    platform: 'node',
    outdir: join(ROOT, 'bundle-proxy-unwritten'),
    metafile: true,
    logLevel: 'error',
  });
  const real = realpathSync(dir);
  const files = Object.keys(metafile.inputs).map((input) => relative(real, realpathSync(join(ROOT, input))));
  const outside = files.filter((file) => file.startsWith('..'));
  if (outside.length) throw new Error(`bundle-proxy: ${dir} reaches outside itself: ${outside.join(', ')}`);
  return ['package.json', 'LICENSE', ...files].filter((file) => existsSync(join(dir, file)));
}

/** Copies what the proxy loads of the package in `dir` to `target`. */
async function copyPackage(dir: string, target: string, pick: PackagePick | undefined): Promise<void> {
  const paths =
    pick === undefined ? ['.'] : 'reach' in pick ? await reachedFiles(dir, pick.reach) : pick.paths;
  for (const path of paths)
    cpSync(join(dir, path), join(target, path), {
      recursive: true,
      // Nested node_modules are packages of their own (copied when they are dependencies).
      filter: (source) => {
        const inside = relative(dir, source);
        return inside === '' || (!inside.split('/').includes('node_modules') && !neverLoaded(inside));
      },
    });
}

/** Cedar's loader line that reads the wasm (replaced in the image by `readBrotli`). */
const CEDAR_DIR = 'node_modules/@cedar-policy/cedar-wasm/nodejs';
const CEDAR_READ = "const wasmBytes = require('fs').readFileSync(wasmPath);";

/**
 * The loader line that decompresses the wasm instead, into one buffer of its size: with zlib's
 * default 16 KB chunks the proxy kept 6.6 MB more RSS after start (the chunks and their
 * concatenation left the allocator's heap fragmented); with one chunk 0.5 MB, within noise.
 */
const readBrotli = (size: number) =>
  `const wasmBytes = require('zlib').brotliDecompressSync(require('fs').readFileSync(\`\${wasmPath}.br\`), { chunkSize: ${size} });`;

/**
 * Replaces Cedar's wasm in `outDir` by its brotli compression and makes the loader decompress it.
 * Compressing takes about 12 s at the best quality, so the result is kept in the temporary folder
 * by the wasm's hash (the tests bundle the proxy in every file that plays a pod).
 */
function compressCedarWasm(outDir: string): void {
  const loader = join(outDir, CEDAR_DIR, 'cedar_wasm.js');
  const wasm = join(outDir, CEDAR_DIR, 'cedar_wasm_bg.wasm');
  const code = readFileSync(loader, 'utf8');
  if (code.split(CEDAR_READ).length !== 2)
    throw new Error(`bundle-proxy: ${loader} no longer reads its wasm with: ${CEDAR_READ}`);
  const bytes = readFileSync(wasm);
  const cached = join(
    tmpdir(),
    'moat-bundle-proxy',
    `cedar-${createHash('sha256').update(bytes).digest('hex').slice(0, 32)}.wasm.br`,
  );
  if (!existsSync(cached)) {
    const compressed = brotliCompressSync(bytes, {
      params: {
        [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MAX_QUALITY,
        [zlib.BROTLI_PARAM_LGWIN]: zlib.BROTLI_MAX_WINDOW_BITS,
        [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    });
    mkdirSync(dirname(cached), { recursive: true });
    writeFileSync(`${cached}.${process.pid}`, compressed);
    renameSync(`${cached}.${process.pid}`, cached);
  }
  cpSync(cached, `${wasm}.br`);
  rmSync(wasm);
  writeFileSync(loader, code.replace(CEDAR_READ, readBrotli(bytes.length)));
}

/** Writes the proxy's app into `outDir` (emptied first): package.json, dist/cli/, node_modules/. */
export async function bundleProxy(outDir: string): Promise<void> {
  rmSync(outDir, { recursive: true, force: true });
  const bundleDir = join(outDir, PROXY_BUNDLE_DIR);
  const { metafile } = await build({
    absWorkingDir: ROOT,
    entryPoints: { 'proxy-main': 'src/cli/proxy-main.ts', worker: 'src/telemetry/worker.ts' },
    outdir: bundleDir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    packages: 'bundle',
    external: Object.keys(RUNTIME_PACKAGES),
    // Function and class names kept, so errors and logs read as they do unbundled.
    minify: true,
    keepNames: true,
    legalComments: 'none',
    logLevel: 'error',
    metafile: true,
    // CommonJS dependencies call require() for Node built-ins.
    banner: {
      js: "import{createRequire as __moatRequire}from'node:module';const require=__moatRequire(import.meta.url);",
    },
  });
  // The image has only the undici files src/util/undici-parts.ts reaches, not its entry.
  const undiciEntry = Object.entries(metafile.outputs).filter(([, output]) =>
    output.imports.some((imported) => imported.external && imported.path === 'undici'),
  );
  if (undiciEntry.length)
    throw new Error(
      `bundle-proxy: ${undiciEntry.map(([file]) => file).join(', ')} import undici's entry; use src/util/undici-parts.ts`,
    );
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;
  // The version line reads name and version; "module" makes dist/**/*.js ES modules.
  writeFileSync(
    join(outDir, 'package.json'),
    `${JSON.stringify({ name: pkg.name, version: pkg.version, type: 'module', private: true }, null, 2)}\n`,
  );
  for (const [dir, pick] of runtimePackageDirs()) {
    const target = join(outDir, relative(ROOT, dir));
    mkdirSync(target, { recursive: true });
    await copyPackage(dir, target, pick);
  }
  compressCedarWasm(outDir);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const outDir = process.argv[2];
  if (!outDir) {
    process.stderr.write('Usage: npm run bundle:proxy -- <out dir>\n');
    process.exit(2);
  }
  await bundleProxy(outDir);
}
