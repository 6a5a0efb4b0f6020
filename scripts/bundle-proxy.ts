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
 * src/proxy/http/, src/auth/inbound/idp-http.ts). Their production dependencies come along.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** Where the entry and its chunks go, under the output folder (as `dist/` of the npm package). */
export const PROXY_BUNDLE_DIR = 'dist/cli';
/** The entry point's file name in PROXY_BUNDLE_DIR. */
export const PROXY_ENTRY = 'proxy-main.js';

/**
 * Package name → the paths inside it the proxy loads (their dependencies are copied whole). Tests,
 * docs and type declarations stay out; so do the web and bundler builds of Cedar's 4 MB wasm.
 */
const RUNTIME_PACKAGES: Record<string, string[]> = {
  '@cedar-policy/cedar-wasm': ['package.json', 'nodejs'],
  pino: ['package.json', 'LICENSE', 'pino.js', 'lib'],
  yaml: ['package.json', 'LICENSE', 'dist'],
  undici: ['package.json', 'LICENSE', 'index.js', 'lib'],
};

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
function runtimePackageDirs(): Map<string, string[] | undefined> {
  const out = new Map<string, string[] | undefined>();
  const visit = (name: string, fromDir: string, paths: string[] | undefined, optional: boolean) => {
    const dir = packageDir(name, fromDir);
    if (dir === undefined) {
      if (optional) return;
      throw new Error(`bundle-proxy: package ${name} is not installed (run npm ci)`);
    }
    if (out.has(dir)) return;
    out.set(dir, paths);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(dep, dir, undefined, false);
    for (const dep of Object.keys(pkg.optionalDependencies ?? {})) visit(dep, dir, undefined, true);
  };
  for (const [name, paths] of Object.entries(RUNTIME_PACKAGES)) visit(name, ROOT, paths, false);
  return out;
}

/** Writes the proxy's app into `outDir` (emptied first): package.json, dist/cli/, node_modules/. */
export async function bundleProxy(outDir: string): Promise<void> {
  rmSync(outDir, { recursive: true, force: true });
  const bundleDir = join(outDir, PROXY_BUNDLE_DIR);
  await build({
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
    // CommonJS dependencies call require() for Node built-ins.
    banner: {
      js: "import{createRequire as __moatRequire}from'node:module';const require=__moatRequire(import.meta.url);",
    },
  });
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;
  // The version line reads name and version; "module" makes dist/**/*.js ES modules.
  writeFileSync(
    join(outDir, 'package.json'),
    `${JSON.stringify({ name: pkg.name, version: pkg.version, type: 'module', private: true }, null, 2)}\n`,
  );
  for (const [dir, paths] of runtimePackageDirs()) {
    const target = join(outDir, relative(ROOT, dir));
    mkdirSync(target, { recursive: true });
    for (const path of paths ?? ['.'])
      cpSync(join(dir, path), join(target, path), {
        recursive: true,
        // Nested node_modules are packages of their own (copied when they are dependencies).
        filter: (source) => !relative(dir, source).split('/').includes('node_modules'),
      });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const outDir = process.argv[2];
  if (!outDir) {
    process.stderr.write('Usage: npm run bundle:proxy -- <out dir>\n');
    process.exit(2);
  }
  await bundleProxy(outDir);
}
