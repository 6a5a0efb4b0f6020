/**
 * `moat client register` checked by the real clients' own commands (installed from npm by
 * scripts/client-clis.sh, run offline with HOME in a temp dir): Claude Code, Gemini CLI, Qwen
 * Code and opencode connect to the Moat proxy in front of a real MCP server and say so; Codex
 * lists the entry with its URL (its `mcp list` does not connect). Then the workload moves to
 * another port (removed and run again on it): every client follows; then `moat client remove`:
 * every entry is gone and the files hold exactly what they held before, comments included.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runClient } from '../../support/client-clis.js';
import { testHostServer } from '../../support/host-server.js';
import { moatOk, printedUrl, testMoatHome } from '../../support/moat-cli.js';
import { uniqueName } from '../../support/podman.js';
import { freePort } from '../../support/ports.js';
import { testTempDir } from '../../support/temp-dir.js';

const remote = testHostServer();
const moatHome = testMoatHome();
const tmp = testTempDir('moat-clients-');

interface RealClient {
  id: string;
  /** The client's listing, in `cwd`. */
  list(home: string, cwd: string): Promise<string>;
  /** The listing shows the entry at `url` (connected, for the clients that connect). */
  shows(listing: string, name: string, url: string): boolean;
}

const CLIENTS: RealClient[] = [
  {
    id: 'claude-code',
    list: async (home, cwd) => (await runClient('claude', ['mcp', 'list'], home, cwd)).output,
    shows: (out, name, url) => out.includes(`${name}: ${url} (HTTP) - ✔ Connected`),
  },
  {
    id: 'codex',
    list: async (home, cwd) => (await runClient('codex', ['mcp', 'list', '--json'], home, cwd)).stdout,
    shows: (out, name, url) => {
      const servers = JSON.parse(out) as Array<{ name: string; transport: { url?: string } }>;
      return servers.some((s) => s.name === name && s.transport.url === url);
    },
  },
  {
    id: 'gemini-cli',
    list: async (home, cwd) => (await runClient('gemini', ['mcp', 'list'], home, cwd)).output,
    shows: (out, name, url) => out.includes(`✓ ${name}: ${url} (http) - Connected`),
  },
  {
    id: 'qwen-code',
    list: async (home, cwd) => (await runClient('qwen', ['mcp', 'list'], home, cwd)).output,
    shows: (out, name, url) => out.includes(`✓ ${name}: ${url} (http) - Connected`),
  },
  {
    id: 'opencode',
    list: async (home, cwd) => (await runClient('opencode', ['mcp', 'list'], home, cwd)).output,
    shows: (out, name, url) => out.includes(`✓ ${name} connected`) && out.includes(url),
  },
];

/** Files the user had before Moat: comments and foreign entries that must survive byte for byte. */
const USER_FILES: Record<string, string> = {
  '.codex/config.toml':
    '# my Codex settings\nmodel = "gpt-5"  # keep this\n\n[mcp_servers.mine]\n# a server of my own\ncommand = "my-server"\nargs = ["--quiet"]\n',
  '.config/opencode/opencode.json':
    '{\n  // my opencode settings\n  "$schema": "https://opencode.ai/config.json",\n  "mcp": {\n    "mine": { "type": "local", "command": ["my-server"], "enabled": false }\n  }\n}\n',
};

function prepareHome(): { home: string; cwd: string } {
  const home = join(tmp, uniqueName('home'));
  const cwd = join(home, 'project');
  for (const dir of ['.codex', '.gemini', '.qwen', '.config/opencode', 'project'])
    mkdirSync(join(home, dir), { recursive: true });
  for (const [file, text] of Object.entries(USER_FILES)) writeFileSync(join(home, file), text);
  // Gemini CLI and Qwen Code load no MCP server in a folder the user has not trusted.
  const trusted = `${JSON.stringify({ [cwd]: 'TRUST_FOLDER' })}\n`;
  writeFileSync(join(home, '.gemini', 'trustedFolders.json'), trusted);
  writeFileSync(join(home, '.qwen', 'trustedFolders.json'), trusted);
  return { home, cwd };
}

async function listings(home: string, cwd: string): Promise<Map<string, string>> {
  const outputs = await Promise.all(CLIENTS.map(async (c) => [c.id, await c.list(home, cwd)] as const));
  return new Map(outputs);
}

function expectShown(all: Map<string, string>, name: string, url: string): void {
  for (const client of CLIENTS) {
    const out = all.get(client.id) ?? '';
    expect(client.shows(out, name, url), `${client.id} should show ${name} at ${url}:\n${out}`).toBe(true);
  }
}

describe('moat client register, checked by the real clients', { timeout: 600_000 }, () => {
  it('each client connects after register, follows a port change, and forgets the entry after remove', async () => {
    const { home, cwd } = prepareHome();
    const env = { HOME: home };
    const name = uniqueName('echo');
    const ids = CLIENTS.map((c) => c.id);

    const firstUrl = printedUrl(
      await moatOk(
        moatHome,
        ['run', remote.url, '--name', name, '--proxy-port', String(await freePort())],
        env,
      ),
    );
    const registered = await moatOk(moatHome, ['client', 'register', ...ids], env);
    expect(registered).toContain(`Claude Code: added ${name}`);
    expectShown(await listings(home, cwd), name, firstUrl);

    // The workload moves to another port: rm and run again; every registered file follows by itself.
    await moatOk(moatHome, ['rm', name], env);
    const secondUrl = printedUrl(
      await moatOk(
        moatHome,
        ['run', remote.url, '--name', name, '--proxy-port', String(await freePort())],
        env,
      ),
    );
    expect(secondUrl).not.toBe(firstUrl);
    expectShown(await listings(home, cwd), name, secondUrl);

    await moatOk(moatHome, ['client', 'remove', ...ids], env);
    const after = await listings(home, cwd);
    for (const client of CLIENTS) expect(after.get(client.id), client.id).not.toContain(name);
    for (const [file, text] of Object.entries(USER_FILES))
      expect(readFileSync(join(home, file), 'utf8')).toBe(text);
    await moatOk(moatHome, ['rm', name], env);
  });
});
