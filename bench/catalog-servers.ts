/**
 * Real servers of Moat's built-in catalog (src/registry/catalog.ts), installed once per machine
 * from their registries at the catalog's versions and started over stdio, for benchmarks that
 * need real tool lists. npm packages go into `npm install --prefix <dir>`, PyPI packages into a
 * venv (`python3 -m venv` + pip: no uvx needed); each under
 * `$XDG_CACHE_HOME/moat-bench/catalog-servers/<registry>-<name>-<version>`, marked complete only
 * once its install succeeded (a half install is redone), and behind a lock so parallel runs
 * install once.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import lockfile from 'proper-lockfile';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { CATALOG } from '../src/registry/catalog.js';

const run = promisify(execFile);
const CACHE = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'moat-bench', 'catalog-servers');
const INSTALL_TIMEOUT_MS = 600_000;
const LIST_TIMEOUT_MS = 60_000;
const COMPLETE = '.moat-complete';

export interface ServerTools {
  id: string;
  identifier: string;
  version: string;
  tools: Tool[];
}

interface Launch {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

interface CatalogPackage {
  registryType: string;
  identifier: string;
  version: string;
}

function catalogPackage(id: string): CatalogPackage {
  const entry = CATALOG.servers.find((s) => s.name === `io.github.modelcontextprotocol/${id}`);
  const pkg = (entry?.packages as CatalogPackage[] | undefined)?.[0];
  if (!pkg) throw new Error(`${id} is not a catalog server with a package`);
  return pkg;
}

/** Runs `install(dir)` once per machine for `key`; returns the directory. */
async function installed(key: string, install: (dir: string) => Promise<void>): Promise<string> {
  mkdirSync(CACHE, { recursive: true });
  const dir = join(CACHE, key);
  if (existsSync(join(dir, COMPLETE))) return dir;
  const release = await lockfile.lock(join(CACHE, `${key}.install`), {
    realpath: false,
    stale: 60_000,
    retries: { retries: 1200, minTimeout: 200, maxTimeout: 500 },
  });
  try {
    if (existsSync(join(dir, COMPLETE))) return dir;
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    process.stderr.write(`  installing ${key} into ${dir}\n`);
    await install(dir);
    writeFileSync(join(dir, COMPLETE), new Date().toISOString());
    return dir;
  } finally {
    await release();
  }
}

async function npmLaunch(identifier: string, version: string): Promise<Launch> {
  const dir = await installed(`npm-${identifier.replace(/[@/]/g, '_')}-${version}`, async (d) => {
    await run(
      'npm',
      ['install', '--prefix', d, '--no-audit', '--no-fund', '--omit=dev', `${identifier}@${version}`],
      {
        timeout: INSTALL_TIMEOUT_MS,
      },
    );
  });
  const pkgDir = join(dir, 'node_modules', identifier);
  const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as {
    bin?: string | Record<string, string>;
  };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {})[0];
  if (!bin) throw new Error(`${identifier} has no bin`);
  return { command: process.execPath, args: [join(pkgDir, bin)] };
}

async function pypiLaunch(identifier: string, version: string): Promise<Launch> {
  const dir = await installed(`pypi-${identifier}-${version}`, async (d) => {
    await run('python3', ['-m', 'venv', d], { timeout: INSTALL_TIMEOUT_MS });
    await run(join(d, 'bin', 'pip'), ['install', '--quiet', `${identifier}==${version}`], {
      timeout: INSTALL_TIMEOUT_MS,
    });
  });
  return { command: join(dir, 'bin', identifier), args: [] };
}

/** How each server is started here: its package, and the arguments its catalog entry asks for. */
async function launch(
  id: string,
  scratch: string,
): Promise<Launch & { identifier: string; version: string }> {
  const pkg = catalogPackage(id);
  const base =
    pkg.registryType === 'npm'
      ? await npmLaunch(pkg.identifier, pkg.version)
      : await pypiLaunch(pkg.identifier, pkg.version);
  const extra: string[] = [];
  const env: Record<string, string> = {};
  if (id === 'filesystem') {
    const root = join(scratch, 'files');
    mkdirSync(root, { recursive: true });
    extra.push(root);
  } else if (id === 'git') {
    const repo = join(scratch, 'repo');
    mkdirSync(repo, { recursive: true });
    await run('git', ['init', '--quiet', repo]);
    extra.push('--repository', repo);
  } else if (id === 'memory') {
    env.MEMORY_FILE_PATH = join(scratch, 'memory.jsonl');
  }
  return { ...base, args: [...base.args, ...extra], env, identifier: pkg.identifier, version: pkg.version };
}

/** The tools a server lists, read live over stdio with the MCP SDK client (every page). */
async function listTools(how: Launch): Promise<Tool[]> {
  const transport = new StdioClientTransport({
    command: how.command,
    args: how.args,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...how.env },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'moat-bench-tool-search', version: '1' });
  await client.connect(transport, { timeout: LIST_TIMEOUT_MS });
  try {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, {
        timeout: LIST_TIMEOUT_MS,
      });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  } finally {
    await client.close();
  }
}

/** The live tool lists of these catalog servers, in order. */
export async function catalogServerTools(ids: readonly string[]): Promise<ServerTools[]> {
  const scratch = mkdtempSync(join(tmpdir(), 'moat-bench-catalog-'));
  try {
    const out: ServerTools[] = [];
    for (const id of ids) {
      const how = await launch(id, scratch);
      out.push({ id, identifier: how.identifier, version: how.version, tools: await listTools(how) });
    }
    return out;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
