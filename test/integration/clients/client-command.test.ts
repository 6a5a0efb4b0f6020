/**
 * `moat client` as a user meets it (the real binary, HOME and MOAT_HOME in temp dirs): bad input
 * is one line with exit 2 or 1 and no file changed; a registered client follows stop, start and
 * rm of its group's workloads by itself; two moat processes registering at once lose nothing.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testHostServer } from '../../support/host-server.js';
import { moat, moatOk, printedUrl, testMoatHome } from '../../support/moat-cli.js';
import { uniqueName } from '../../support/podman.js';
import { moatOnPty } from '../../support/pty.js';
import { testTempDir } from '../../support/temp-dir.js';

const remote = testHostServer();
const moatHome = testMoatHome();
const tmp = testTempDir('moat-client-cmd-');

function newHome(): string {
  const home = join(tmp, uniqueName('home'));
  mkdirSync(home, { recursive: true });
  return home;
}

const CURSOR_FILE = '{\n  // Cursor reads strict JSON: a comment is an error\n}\n';

describe('moat client: bad input', { timeout: 120_000 }, () => {
  it('an unknown client is a usage error naming the supported ones (exit 2)', async () => {
    const result = await moat(moatHome, ['client', 'register', 'notepad'], { HOME: newHome() });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(
      /^Error: unknown client "notepad"; supported: claude-code, claude-desktop, cursor/,
    );
  });

  it('a malformed file is refused with file:line:column, exit 1, untouched, and nothing registered', async () => {
    const home = newHome();
    mkdirSync(join(home, '.cursor'));
    const file = join(home, '.cursor', 'mcp.json');
    writeFileSync(file, CURSOR_FILE);
    const result = await moat(moatHome, ['client', 'register', 'cursor'], { HOME: home });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `Error: ${file}:2:3: not valid JSON (InvalidCommentToken); fix it first — Moat left the file untouched\n`,
    );
    expect(readFileSync(file, 'utf8')).toBe(CURSOR_FILE);
    expect(existsSync(`${file}.moat-backup`)).toBe(false);
    expect(await moatOk(moatHome, ['client', 'status'], { HOME: home })).not.toContain('cursor');
  });

  it('a read-only file and a missing directory: one line each, exit 1, no file changed', async () => {
    const home = newHome();
    const file = join(home, '.claude.json');
    writeFileSync(file, '{}\n');
    chmodSync(file, 0o444);
    const readOnly = await moat(moatHome, ['client', 'register', 'claude-code'], { HOME: home });
    expect(readOnly.code).toBe(1);
    expect(readOnly.stderr).toBe(`Error: ${file} is read-only; Moat left it untouched\n`);
    expect(readFileSync(file, 'utf8')).toBe('{}\n');

    const missing = await moat(moatHome, ['client', 'register', 'codex'], { HOME: home });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      `Error: ${join(home, '.codex')} does not exist (is the client installed?); Moat created nothing\n`,
    );
    expect(existsSync(join(home, '.codex'))).toBe(false);
  });

  it('--token-env for a client that cannot read variables, and setup without a terminal, are usage errors', async () => {
    const home = newHome();
    const zed = await moat(moatHome, ['client', 'register', 'zed', '--token-env', 'MY_TOKEN'], {
      HOME: home,
    });
    expect(zed.code).toBe(2);
    expect(zed.stderr).toContain('--token-env: zed cannot read a header from an environment variable');
    const setup = await moat(moatHome, ['client', 'setup'], { HOME: home });
    expect(setup.code).toBe(2);
    expect(setup.stderr).toContain('elsewhere give --client <clients>');
  });
});

describe('moat client: sync with the group', { timeout: 300_000 }, () => {
  it("follows stop, start and rm; two registrations at once keep both; remove restores the user's file", async () => {
    const home = newHome();
    const env = { HOME: home };
    mkdirSync(join(home, '.cursor'));
    mkdirSync(join(home, '.codex'));
    const cursorFile = join(home, '.cursor', 'mcp.json');
    const userCursor = '{\n  "mcpServers": {\n    "mine": { "url": "https://example.com/mcp" }\n  }\n}\n';
    writeFileSync(cursorFile, userCursor);
    const name = uniqueName('sync');
    const url = printedUrl(await moatOk(moatHome, ['run', remote.url, '--name', name], env));

    // Two moat processes at once, each registering a client: both registrations and both files hold.
    await Promise.all([
      moatOk(moatHome, ['client', 'register', 'cursor'], env),
      moatOk(moatHome, ['client', 'register', 'codex'], env),
    ]);
    const codexFile = join(home, '.codex', 'config.toml');
    const cursorEntry = () =>
      (JSON.parse(readFileSync(cursorFile, 'utf8')) as { mcpServers: Record<string, { url: string }> })
        .mcpServers[name];
    expect(cursorEntry()).toEqual({ url });
    expect(readFileSync(codexFile, 'utf8')).toContain(`url = "${url}"`);
    const status = await moatOk(moatHome, ['client', 'status'], env);
    expect(status).toMatch(new RegExp(`cursor\\s+default\\s+${cursorFile}\\s+${name}\\s+in sync`));

    const stopped = await moatOk(moatHome, ['stop', name], env);
    expect(stopped).toContain(`Cursor: removed ${name}`);
    expect(cursorEntry()).toBeUndefined();
    await moatOk(moatHome, ['start', name], env);
    expect(cursorEntry()).toEqual({ url });
    await moatOk(moatHome, ['rm', name], env);
    expect(cursorEntry()).toBeUndefined();
    expect(readFileSync(codexFile, 'utf8')).not.toContain(name);

    await moatOk(moatHome, ['client', 'remove', 'cursor', 'codex'], env);
    expect(readFileSync(cursorFile, 'utf8')).toBe(userCursor);
    expect(await moatOk(moatHome, ['client', 'status'], env)).toBe(
      'No clients registered ("moat client register <client>").\n',
    );
  });
});

describe('moat client setup on a terminal', { timeout: 120_000 }, () => {
  it('lists the clients found, numbered, and registers the ones picked', async () => {
    const home = newHome();
    mkdirSync(join(home, '.gemini'));
    mkdirSync(join(home, '.cursor'));
    let asked = '';
    const pty = await moatOnPty(['client', 'setup'], {
      home: moatHome,
      env: { HOME: home, PATH: '/usr/bin:/bin' },
      keyboard: true,
      onOutput(output, type) {
        if (!output.includes('Register which clients?')) return false;
        asked = output;
        const cursor = /(\d+)\) Cursor/.exec(output)?.[1] ?? 'none';
        type(`${cursor}\r`);
        return true;
      },
    });
    expect(pty.timedOut).toBe(false);
    expect(asked).toMatch(/1\) Cursor .*\n.*2\) Gemini CLI/s);
    expect(pty.code).toBe(0);
    expect(pty.output).toContain('Registered Cursor with group default');
    expect(await moatOk(moatHome, ['client', 'status'], { HOME: home })).toMatch(/cursor\s+default/);
  });
});
