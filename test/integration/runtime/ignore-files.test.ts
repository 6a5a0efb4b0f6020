/**
 * Ignore files on real Podman: a mounted project lists `.env` and `secrets/`; the container,
 * acting as an attacker, tries to read them directly, through symlinks and through `..`, and
 * gets nothing, while it reads every other file. Covers the global ignore file and
 * --ignore-globally=false (ignore_config.LoadGlobal).
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { RunConfigInput } from '../../../src/config/runconfig.js';
import { withIgnoreOverlays } from '../../../src/runtime/overlays.js';
import { callResult, callText } from '../../fixtures/pipes-client.js';
import { Harness } from './harness.js';

let harness: Harness;
let moatHome: string;
const savedHome = process.env.MOAT_HOME;

beforeAll(async () => {
  harness = await Harness.create();
  // The global ignore file and the empty overlay file live under MOAT_HOME.
  moatHome = mkdtempSync(join(tmpdir(), 'moat-ignore-home-'));
  process.env.MOAT_HOME = moatHome;
});

afterAll(async () => {
  if (savedHome === undefined) delete process.env.MOAT_HOME;
  else process.env.MOAT_HOME = savedHome;
  await harness.cleanup();
  rmSync(moatHome, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A project with secrets in the places an ignore file lists, and ordinary files beside them. */
function project(ignoreFile: string, patterns: string): string {
  const dir = tempDir('moat-ignore-project-');
  writeFileSync(join(dir, ignoreFile), patterns);
  writeFileSync(join(dir, '.env'), 'API_KEY=top-secret');
  writeFileSync(join(dir, 'README.md'), 'public readme');
  mkdirSync(join(dir, 'secrets'));
  writeFileSync(join(dir, 'secrets', 'key.pem'), 'PRIVATE KEY');
  mkdirSync(join(dir, 'src', 'config'), { recursive: true });
  writeFileSync(join(dir, 'src', 'main.ts'), 'console.log(1)');
  writeFileSync(join(dir, 'src', 'config', '.env'), 'NESTED=secret');
  return dir;
}

/** Launches the stdio fixture with the project mounted, through the same overlay step the supervisor uses. */
async function launchWith(overrides: Partial<RunConfigInput>) {
  const launched = await harness.launch(overrides, {}, (spec, config) =>
    withIgnoreOverlays(spec, config.ignore_config),
  );
  return launched.client;
}

describe('ignore files hide what they list inside the container', () => {
  it('.thvignore: the container cannot read .env or secrets/ (nor nested .env) but reads the rest', async () => {
    const dir = project('.thvignore', '# hidden from servers\n.env\nsecrets/\n');
    const client = await launchWith({ volumes: [`${dir}:/project`] });
    expect(await callText(client, 'read_file', { path: '/project/README.md' })).toBe('public readme');
    expect(await callText(client, 'read_file', { path: '/project/src/main.ts' })).toBe('console.log(1)');
    expect(await callText(client, 'read_file', { path: '/project/.env' })).toBe('');
    expect(await callText(client, 'read_file', { path: '/project/src/config/.env' })).toBe('');
    expect(await callResult(client, 'read_file', { path: '/project/secrets/key.pem' })).toEqual({
      text: 'ENOENT',
      isError: true,
    });
    // `..` inside the container resolves in the container's view, where the path is covered.
    expect(await callText(client, 'read_file', { path: '/project/src/../.env' })).toBe('');
  });

  it('the hidden paths cannot be overwritten from a writable mount', async () => {
    const dir = project('.moatignore', '.env\nsecrets/\n');
    const client = await launchWith({ volumes: [`${dir}:/project`] });
    expect(await callText(client, 'write_file', { path: '/project/new.txt', content: 'x' })).toBe('ok');
    expect(await callResult(client, 'write_file', { path: '/project/.env', content: 'x' })).toEqual({
      text: 'EROFS',
      isError: true,
    });
    expect(
      await callResult(client, 'write_file', { path: '/project/secrets/planted', content: 'x' }),
    ).toEqual({ text: 'EROFS', isError: true });
  });

  it('symlinks to ignored paths, inside the mount or into another mount, show nothing', async () => {
    const outside = tempDir('moat-ignore-outside-');
    writeFileSync(join(outside, 'token'), 'OUTSIDE TOKEN');
    writeFileSync(join(outside, '.moatignore'), 'token\n');
    const dir = project('.moatignore', '.env\nsecrets/\nlinked-token\n');
    symlinkSync('.env', join(dir, 'innocent-name'));
    symlinkSync('secrets/key.pem', join(dir, 'key-link'));
    symlinkSync('../../secrets', join(dir, 'src', 'config', 'secrets-link'));
    // Ignored by name, pointing at a file the other mount shows at the same host path.
    symlinkSync(join(outside, 'token'), join(dir, 'linked-token'));
    const client = await launchWith({ volumes: [`${dir}:/project`, `${outside}:${outside}:ro`] });
    expect(await callText(client, 'read_file', { path: '/project/innocent-name' })).toBe('');
    expect((await callResult(client, 'read_file', { path: '/project/key-link' })).isError).toBe(true);
    expect(
      (await callResult(client, 'read_file', { path: '/project/src/config/secrets-link/key.pem' })).isError,
    ).toBe(true);
    expect(await callText(client, 'read_file', { path: '/project/linked-token' })).toBe('');
    expect(await callText(client, 'read_file', { path: join(outside, 'token') })).toBe('');
  });

  it('applies the global ignore file to every mount unless LoadGlobal is false', async () => {
    const config = join(moatHome, 'config');
    mkdirSync(config, { recursive: true });
    writeFileSync(join(config, 'moatignore'), '*.pem\n');
    onTestFinished(() => rmSync(join(config, 'moatignore')));
    const dir = tempDir('moat-ignore-global-');
    writeFileSync(join(dir, 'id.pem'), 'GLOBAL SECRET');
    writeFileSync(join(dir, 'notes.txt'), 'notes');

    const hidden = await launchWith({ volumes: [`${dir}:/data:ro`] });
    expect(await callText(hidden, 'read_file', { path: '/data/id.pem' })).toBe('');
    expect(await callText(hidden, 'read_file', { path: '/data/notes.txt' })).toBe('notes');

    const shown = await launchWith({
      volumes: [`${dir}:/data:ro`],
      ignore_config: { LoadGlobal: false, PrintOverlays: false },
    });
    expect(await callText(shown, 'read_file', { path: '/data/id.pem' })).toBe('GLOBAL SECRET');
  });
});
