import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { RunConfig } from '../config/runconfig.js';
import { containerEnvironment, parseDotenv } from './env.js';

describe('parseDotenv', () => {
  it('reads KEY=VALUE lines, comments, export prefixes and quotes', () => {
    const text = '# comment\nA=1\nexport B = two words \n\nC="quoted \\"x\\""\nD=\'single\'\nE=a=b\n';
    expect(parseDotenv(text, 'f')).toEqual({
      A: '1',
      B: 'two words',
      C: 'quoted "x"',
      D: 'single',
      E: 'a=b',
    });
  });
  it('names the file and line of a bad line', () => {
    expect(() => parseDotenv('A=1\nnot a pair\n', '/x/.env')).toThrow('/x/.env:2: expected KEY=VALUE');
  });
});

describe('containerEnvironment', () => {
  const base = { name: 'w', image: 'i', transport: 'stdio', host: '127.0.0.1', port: 1 } as RunConfig;

  it('lets env_vars override the env file directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'moat-env-'));
    try {
      await writeFile(join(dir, 'a.env'), 'A=from-file\nB=from-file\n');
      await writeFile(join(dir, '.hidden'), 'H=1\n');
      const env = await containerEnvironment({ ...base, env_file_dir: dir, env_vars: { B: 'from-flag' } });
      expect(env).toEqual({ A: 'from-file', B: 'from-flag' });
    } finally {
      await rm(dir, { recursive: true });
    }
  });

  it('adds --secret values from the secrets manager last, and fails loudly on a missing one', async () => {
    vi.stubEnv('MOAT_SECRETS_PROVIDER', 'environment');
    vi.stubEnv('MOAT_SECRET_gh', 'from-the-manager');
    try {
      const env = await containerEnvironment({
        ...base,
        env_vars: { TOKEN: 'flag' },
        secrets: ['gh,target=TOKEN'],
      });
      expect(env).toEqual({ TOKEN: 'from-the-manager' });
      await expect(containerEnvironment({ ...base, secrets: ['absent,target=X'] })).rejects.toThrow(
        /secret "absent".*is not in the environment secrets provider/,
      );
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
