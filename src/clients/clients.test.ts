/**
 * Golden files per client: a file in the format its documentation gives, with comments and
 * foreign entries, gets Moat's entry (compared with `<client>.registered.<ext>`, reviewed by
 * hand; MOAT_UPDATE_GOLDEN=1 rewrites them) and comes back byte for byte after removal. Then the
 * file-safety rules: malformed, read-only, missing directory, foreign and hand-edited entries.
 */
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKUP_SUFFIX, reconcileClientFile } from './client-file.js';
import { readLedger } from './ledger.js';
import { desiredEntries } from './sync.js';
import { CLIENTS, findClient } from './table.js';
import type { ClientSpec, Endpoint } from './types.js';

const FIXTURES = fileURLToPath(new URL('../../test/fixtures/clients/', import.meta.url));
const ENDPOINT: Endpoint = {
  name: 'time',
  url: 'http://127.0.0.1:41234/mcp',
  transport: 'streamable-http',
  requiresAuth: false,
};

let dir: string;
const savedHome = process.env.MOAT_HOME;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'moat-clients-unit-'));
  process.env.MOAT_HOME = join(dir, 'moat');
});
afterAll(() => {
  if (savedHome === undefined) delete process.env.MOAT_HOME;
  else process.env.MOAT_HOME = savedHome;
  rmSync(dir, { recursive: true, force: true });
});

function fixtureOf(client: ClientSpec): string {
  const file = readdirSync(FIXTURES).find(
    (f) => f.startsWith(`${client.id}.`) && !f.includes('.registered.'),
  );
  if (!file) throw new Error(`no golden fixture for ${client.id}`);
  return join(FIXTURES, file);
}

/** A copy of `source` in its own directory (each client has its own ledger and lock). */
function copyOf(source: string, name = 'config'): string {
  const target = join(mkdtempSync(join(dir, 'file-')), `${name}${extname(source)}`);
  copyFileSync(source, target);
  return target;
}

function entriesFor(client: ClientSpec, endpoints: Endpoint[], tokenEnv?: string) {
  return desiredEntries(client, endpoints, tokenEnv).entries;
}

describe('client table', () => {
  it('has at least 14 clients with distinct ids and a documented path per platform', () => {
    expect(CLIENTS.length).toBeGreaterThanOrEqual(14);
    expect(new Set(CLIENTS.map((c) => c.id)).size).toBe(CLIENTS.length);
    for (const c of CLIENTS) for (const path of Object.values(c.documented)) expect(path, c.id).toMatch(/\S/);
  });

  it('puts no token in a file: OIDC workloads get OAuth discovery or a header naming the variable', () => {
    const secured = { ...ENDPOINT, requiresAuth: true };
    for (const client of CLIENTS) {
      const { entries, skipped } = desiredEntries(client, [secured], 'MOAT_TOKEN');
      const text = JSON.stringify(Object.fromEntries(entries));
      if (client.envReference) expect(text, client.id).toContain('MOAT_TOKEN');
      else if (client.oauthDiscovery) expect(text, client.id).not.toContain('Authorization');
      else
        expect(
          skipped.map((s) => s.name),
          client.id,
        ).toEqual(['time']);
      const discovered = desiredEntries(client, [secured], undefined);
      if (!client.oauthDiscovery) expect(discovered.skipped[0]?.reason, client.id).toContain('requires OIDC');
    }
  });

  it('refuses an SSE endpoint for clients that speak only streamable HTTP, and says why', () => {
    const codex = findClient('codex') as ClientSpec;
    const { skipped } = desiredEntries(codex, [{ ...ENDPOINT, transport: 'sse' }], undefined);
    expect(skipped[0]?.reason).toContain('only streamable HTTP');
  });
});

describe.each(CLIENTS.map((c) => [c.id, c] as const))('golden file: %s', (_id, client) => {
  it("adds Moat's entry and nothing else, and removal gives the file back byte for byte", async () => {
    const source = fixtureOf(client);
    const original = readFileSync(source, 'utf8');
    const file = copyOf(source);
    const report = await reconcileClientFile(client, file, entriesFor(client, [ENDPOINT]));
    expect(report).toMatchObject({ added: ['time'], removed: [], skipped: [] });
    const golden = source.replace(/(\.[a-z]+)$/, '.registered$1');
    const written = readFileSync(file, 'utf8');
    if (process.env.MOAT_UPDATE_GOLDEN === '1') writeFileSync(golden, written);
    expect(written).toBe(readFileSync(golden, 'utf8'));
    expect(readFileSync(`${file}${BACKUP_SUFFIX}`, 'utf8')).toBe(original);
    expect(Object.keys((await readLedger(client.id)).entries)).toEqual(['time']);

    const moved = { ...ENDPOINT, url: 'http://127.0.0.1:42000/mcp' };
    expect(await reconcileClientFile(client, file, entriesFor(client, [moved]))).toMatchObject({
      updated: ['time'],
    });
    expect(readFileSync(file, 'utf8')).toBe(written.replace('41234', '42000'));

    expect(await reconcileClientFile(client, file, new Map())).toMatchObject({ removed: ['time'] });
    expect(readFileSync(file, 'utf8')).toBe(original);
  });
});

describe('safety of the user files', () => {
  const claude = findClient('claude-code') as ClientSpec;
  const codex = findClient('codex') as ClientSpec;
  const goose = findClient('goose') as ClientSpec;
  const vscode = findClient('vscode') as ClientSpec;

  it.each([
    [claude, '{\n  "mcpServers": {\n    "a": 1,,\n  }\n}\n', /:3:12: not valid JSON/],
    [vscode, '{\n  "servers": { "a": }\n}\n', /:2:21: not valid JSONC/],
    [codex, 'model = "x"\n[mcp_servers.a\nurl = 1\n', /:2:\d+: not valid TOML/],
    [goose, 'extensions:\n  a: [1, 2\nb: c\n', /:\d+:\d+: not valid YAML/],
  ])(
    'refuses a malformed %s file with its position, and leaves it untouched',
    async (client, text, message) => {
      const file = join(mkdtempSync(join(dir, 'bad-')), 'config');
      writeFileSync(file, text);
      await expect(reconcileClientFile(client, file, entriesFor(client, [ENDPOINT]))).rejects.toThrow(
        message,
      );
      expect(readFileSync(file, 'utf8')).toBe(text);
      expect(existsSync(`${file}${BACKUP_SUFFIX}`)).toBe(false);
    },
  );

  it('refuses a read-only file and a missing directory, changing nothing', async () => {
    const file = copyOf(fixtureOf(claude));
    chmodSync(file, 0o444);
    await expect(reconcileClientFile(claude, file, entriesFor(claude, [ENDPOINT]))).rejects.toThrow(
      /is read-only; Moat left it untouched$/,
    );
    expect(readFileSync(file, 'utf8')).toBe(readFileSync(fixtureOf(claude), 'utf8'));
    await expect(
      reconcileClientFile(claude, join(dir, 'no-such-dir', 'x.json'), entriesFor(claude, [ENDPOINT])),
    ).rejects.toThrow(/no-such-dir does not exist \(is the client installed\?\); Moat created nothing$/);
    expect(existsSync(join(dir, 'no-such-dir'))).toBe(false);
  });

  it('never overwrites an entry it did not write, nor one the user changed by hand', async () => {
    const cursor = findClient('cursor') as ClientSpec;
    const file = copyOf(fixtureOf(cursor));
    const foreign = { ...ENDPOINT, name: 'sentry' };
    const before = readFileSync(file, 'utf8');
    const report = await reconcileClientFile(cursor, file, entriesFor(cursor, [foreign]));
    expect(report.skipped[0]?.reason).toContain('already has an entry "sentry" that Moat did not write');
    expect(readFileSync(file, 'utf8')).toBe(before);

    await reconcileClientFile(cursor, file, entriesFor(cursor, [ENDPOINT]));
    const edited = readFileSync(file, 'utf8').replace('41234/mcp"', '41234/mcp", "note": "mine now"');
    writeFileSync(file, edited);
    const removal = await reconcileClientFile(cursor, file, new Map());
    expect(removal.skipped).toEqual([
      { name: 'time', reason: 'changed by hand since Moat wrote it; left as it is' },
    ]);
    expect(readFileSync(file, 'utf8')).toBe(edited);
  });

  it('loses nothing when several edits of one file run at once (the client lock)', async () => {
    const file = copyOf(fixtureOf(codex));
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    // Each call makes the entries exactly its set; run at once, the last one must win whole.
    await Promise.all(
      names.map((_, i) =>
        reconcileClientFile(
          codex,
          file,
          entriesFor(
            codex,
            names.slice(0, i + 1).map((name) => ({ ...ENDPOINT, name })),
          ),
        ),
      ),
    );
    const ledger = await readLedger(codex.id);
    const text = readFileSync(file, 'utf8');
    for (const name of Object.keys(ledger.entries)) expect(text).toContain(`[mcp_servers.${name}]`);
    for (const name of names.filter((n) => !(n in ledger.entries)))
      expect(text).not.toContain(`[mcp_servers.${name}]`);
    expect(text.startsWith(readFileSync(fixtureOf(codex), 'utf8'))).toBe(true);
  });
});
