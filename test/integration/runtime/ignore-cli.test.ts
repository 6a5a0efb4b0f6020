/**
 * Ignore files through `moat run`, the whole path: the terminal prints the hidden paths
 * (--print-resolved-overlays), the detached supervisor creates the container with them hidden,
 * and an MCP client going through Moat's proxy cannot read them while it reads the rest.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { testServerImage } from '../../support/images.js';
import { callTool, moat, moatOk, printedUrl, testMoatHome } from '../../support/moat-cli.js';
import { uniqueName } from '../../support/podman.js';

let image: string;
const home = testMoatHome();

beforeAll(async () => {
  image = await testServerImage('stdio-server');
});

describe('moat run with ignore files', { timeout: 300_000 }, () => {
  it('prints the hidden paths and the running server cannot read them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'moat-ignore-cli-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, '.thvignore'), '.env\nsecrets/\n');
    writeFileSync(join(dir, '.env'), 'TOKEN=secret');
    writeFileSync(join(dir, 'readme.txt'), 'public');
    mkdirSync(join(dir, 'secrets'));
    writeFileSync(join(dir, 'secrets', 'key'), 'KEY');
    const name = uniqueName('ignorecli');
    const args = ['run', '--transport', 'stdio', '--name', name, '-v', `${dir}:/data:ro`];

    const result = await moat(home, [...args, '--print-resolved-overlays', image]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('Hiding /data/.env (ignored file: empty read-only file)');
    expect(result.stderr).toContain('Hiding /data/secrets/ (ignored directory: empty read-only tmpfs)');
    const url = printedUrl(result.stdout);
    expect(await callTool(url, 'read_file', { path: '/data/readme.txt' })).toBe('public');
    expect(await callTool(url, 'read_file', { path: '/data/.env' })).toBe('');
    expect(await callTool(url, 'read_file', { path: '/data/secrets/key' })).toBe('ENOENT');
    await moatOk(home, ['rm', name]);
  });
});
