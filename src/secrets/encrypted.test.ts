import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EncryptedSecretsProvider } from './encrypted.js';

let dir: string;
let path: string;
const open = (password: string): EncryptedSecretsProvider =>
  new EncryptedSecretsProvider(path, () => Promise.resolve(password));

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'moat-secrets-'));
  path = join(dir, 'data', 'secrets_encrypted');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('EncryptedSecretsProvider', () => {
  it('round-trips values through a file that holds no plaintext and is mode 0600', async () => {
    const writer = open('correct horse');
    await writer.set('GITHUB_TOKEN', 'ghp_supersecretvalue');
    await writer.set('OTHER', 'x');
    const reader = open('correct horse');
    expect(await reader.get('GITHUB_TOKEN')).toBe('ghp_supersecretvalue');
    expect(await reader.list()).toEqual(['GITHUB_TOKEN', 'OTHER']);
    expect(await reader.get('missing')).toBeUndefined();
    expect(await reader.get('constructor')).toBeUndefined();
    const raw = await readFile(path, 'utf8');
    expect(raw).not.toContain('ghp_supersecretvalue');
    expect(raw).not.toContain('GITHUB_TOKEN');
    expect(JSON.parse(raw)).toMatchObject({ version: 1, kdf: { name: 'scrypt' }, cipher: 'aes-256-gcm' });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('deletes and reports whether the secret existed', async () => {
    const p = open('pw');
    await p.set('A', '1');
    expect(await p.delete('A')).toBe(true);
    expect(await p.delete('A')).toBe(false);
    expect(await p.list()).toEqual([]);
  });

  it('keeps the salt and changes the IV on every write', async () => {
    const p = open('pw');
    await p.set('A', '1');
    const first = JSON.parse(await readFile(path, 'utf8'));
    await p.set('A', '1');
    const second = JSON.parse(await readFile(path, 'utf8'));
    expect(second.kdf.salt).toBe(first.kdf.salt);
    expect(second.iv).not.toBe(first.iv);
  });

  it('refuses a wrong password with a clear error and does not touch the file', async () => {
    await open('right').set('A', '1');
    const before = await readFile(path, 'utf8');
    await expect(open('wrong').get('A')).rejects.toThrow(/password is wrong \(check MOAT_SECRETS_PASSWORD\)/);
    await expect(open('wrong').set('B', '2')).rejects.toThrow(/password is wrong/);
    expect(await readFile(path, 'utf8')).toBe(before);
  });

  it('reports a damaged or foreign file instead of crashing', async () => {
    await open('pw').set('A', '1');
    await writeFile(path, 'not json');
    await expect(open('pw').get('A')).rejects.toThrow(/is not a moat encrypted secrets file/);
    await writeFile(path, JSON.stringify({ version: 9 }));
    await expect(open('pw').get('A')).rejects.toThrow(/unsupported format \(version 9\)/);
  });

  it('loses no update when many writers race', async () => {
    const writers = Array.from({ length: 12 }, () => open('pw'));
    await Promise.all(writers.map((w, i) => w.set(`KEY_${i}`, `value-${i}`)));
    const reader = open('pw');
    expect(await reader.list()).toHaveLength(12);
    for (let i = 0; i < 12; i++) expect(await reader.get(`KEY_${i}`)).toBe(`value-${i}`);
  });

  it('asks for the password once per provider', async () => {
    let asked = 0;
    const p = new EncryptedSecretsProvider(path, () => {
      asked += 1;
      return Promise.resolve('pw');
    });
    await p.set('A', '1');
    await p.get('A');
    await p.list();
    expect(asked).toBe(1);
  });
});
