/**
 * The `encrypted` provider: every secret in one AES-256-GCM encrypted file ($data/secrets_encrypted,
 * mode 0600). The key comes from the user's password through scrypt with a random salt stored in
 * the file (never a bare hash), and every write uses a fresh IV. Writers take a file lock and
 * replace the file atomically (temp file + rename), so concurrent `moat` processes neither lose
 * updates nor leave a half-written file; readers never need the lock.
 */
import { createCipheriv, createDecipheriv, randomBytes, scrypt as scryptCallback } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import lockfile from 'proper-lockfile';
import { runtimeError } from '../util/errors.js';
import type { SecretsProvider } from './types.js';

const FORMAT_VERSION = 1;
const AAD = Buffer.from('moat-secrets-v1');
/** scrypt cost: about 32 MiB and a tenth of a second per key derivation, once per process. */
const SCRYPT = { N: 32768, r: 8, p: 1 } as const;
const MAX_PLAINTEXT_BYTES = 32 * 1024 * 1024;

interface FileFormat {
  version: number;
  kdf: { name: 'scrypt'; N: number; r: number; p: number; salt: string };
  cipher: 'aes-256-gcm';
  iv: string;
  tag: string;
  data: string;
}

interface Contents {
  salt: Buffer;
  secrets: Record<string, string>;
}

function scrypt(
  password: string,
  salt: Buffer,
  params: { N: number; r: number; p: number },
): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCallback(password, salt, 32, { ...params, maxmem: 256 * params.N * params.r }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

export class EncryptedSecretsProvider implements SecretsProvider {
  readonly kind = 'encrypted';
  readonly writable = true;
  private readonly keys = new Map<string, Promise<Buffer>>();
  private password: Promise<string> | undefined;

  /** `getPassword` is called at most once, on the first access (it may prompt). */
  constructor(
    readonly path: string,
    private readonly getPassword: () => Promise<string>,
  ) {}

  async get(name: string): Promise<string | undefined> {
    const { secrets } = await this.read();
    return Object.hasOwn(secrets, name) ? secrets[name] : undefined;
  }

  async list(): Promise<string[]> {
    return Object.keys((await this.read()).secrets).sort();
  }

  async set(name: string, value: string): Promise<void> {
    await this.update((secrets) => {
      secrets[name] = value;
    });
  }

  async delete(name: string): Promise<boolean> {
    let found = false;
    await this.update((secrets) => {
      found = Object.hasOwn(secrets, name);
      delete secrets[name];
    });
    return found;
  }

  private key(salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
    const id = `${salt.toString('base64')}:${params.N}:${params.r}:${params.p}`;
    let key = this.keys.get(id);
    if (!key) {
      this.password ??= this.getPassword();
      key = this.password.then((password) => scrypt(password, salt, params));
      this.keys.set(id, key);
    }
    return key;
  }

  private async read(): Promise<Contents> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { salt: randomBytes(16), secrets: {} };
      throw runtimeError(`cannot read the secrets file ${this.path}: ${(err as Error).message}`);
    }
    const file = this.parse(text);
    const salt = Buffer.from(file.kdf.salt, 'base64');
    const key = await this.key(salt, file.kdf);
    let plaintext: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(file.iv, 'base64'));
      decipher.setAAD(AAD);
      decipher.setAuthTag(Buffer.from(file.tag, 'base64'));
      plaintext = Buffer.concat([decipher.update(Buffer.from(file.data, 'base64')), decipher.final()]);
    } catch {
      throw runtimeError(
        `cannot decrypt the secrets file ${this.path}: the password is wrong (check MOAT_SECRETS_PASSWORD) or the file is damaged`,
      );
    }
    const secrets = (JSON.parse(plaintext.toString('utf8')) as { secrets: Record<string, string> }).secrets;
    return { salt, secrets };
  }

  private parse(text: string): FileFormat {
    let file: FileFormat;
    try {
      file = JSON.parse(text) as FileFormat;
    } catch {
      throw runtimeError(`the secrets file ${this.path} is not a moat encrypted secrets file`);
    }
    if (file.version !== FORMAT_VERSION || file.kdf?.name !== 'scrypt' || file.cipher !== 'aes-256-gcm') {
      throw runtimeError(
        `the secrets file ${this.path} has an unsupported format (version ${String(file.version)}); this moat reads version ${FORMAT_VERSION}`,
      );
    }
    return file;
  }

  /** Read-modify-write under the file lock, so concurrent writers never lose each other's updates. */
  private async update(mutate: (secrets: Record<string, string>) => void): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    let release: () => Promise<void>;
    try {
      release = await lockfile.lock(this.path, {
        realpath: false,
        stale: 10_000,
        retries: { retries: 100, minTimeout: 20, maxTimeout: 250, randomize: true },
      });
    } catch (err) {
      throw runtimeError(`cannot lock the secrets file ${this.path}: ${(err as Error).message}`);
    }
    try {
      const { salt, secrets } = await this.read();
      mutate(secrets);
      await this.write(salt, secrets);
    } finally {
      await release();
    }
  }

  private async write(salt: Buffer, secrets: Record<string, string>): Promise<void> {
    const plaintext = Buffer.from(JSON.stringify({ secrets }), 'utf8');
    if (plaintext.length > MAX_PLAINTEXT_BYTES) {
      throw runtimeError(`the secrets file would exceed ${MAX_PLAINTEXT_BYTES} bytes; delete unused secrets`);
    }
    const key = await this.key(salt, SCRYPT);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(AAD);
    const data = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    const file: FileFormat = {
      version: FORMAT_VERSION,
      kdf: { name: 'scrypt', ...SCRYPT, salt: salt.toString('base64') },
      cipher: 'aes-256-gcm',
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      data: data.toString('base64'),
    };
    const temp = `${this.path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(JSON.stringify(file));
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(temp, this.path);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }
}
