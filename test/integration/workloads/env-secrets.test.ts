/**
 * The server's environment, checked from inside the container: env file < -e < --secret, env
 * files re-read on every start, secret values never written to the RunConfig or the log, and a
 * missing secret failing the run before anything is saved.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { testServerImage } from '../../support/images.js';
import { callTool, moat, testMoatHome, moatOk, printedUrl, workload } from '../../support/moat-cli.js';
import { uniqueName } from '../../support/podman.js';

const SECRET = 'value-from-the-secrets-manager';
/** The environment secrets provider reads MOAT_SECRET_<name> from the moat process's environment. */
const secretsEnv = { MOAT_SECRETS_PROVIDER: 'environment', MOAT_SECRET_tok: SECRET };

let image: string;
const home = testMoatHome();

beforeAll(async () => {
  image = await testServerImage('stdio-server');
});

describe('container environment', { timeout: 300_000 }, () => {
  it('layers env file, -e and --secret, and re-reads the env file on restart', async () => {
    const name = uniqueName('env');
    const envFile = join(home, 'server.env');
    writeFileSync(envFile, 'A=from-file\nB=from-file\nC=from-file\n');
    const args = ['run', '--transport', 'stdio', '--name', name, '--env-file', envFile, '-e', 'B=from-flag'];
    const url = printedUrl(await moatOk(home, [...args, '--secret', 'tok,target=C', image], secretsEnv));
    const env = async (key: string) => callTool(url, 'get_env', { name: key });
    expect([await env('A'), await env('B'), await env('C')]).toEqual(['from-file', 'from-flag', SECRET]);

    for (const file of [`state/runconfigs/${name}.json`, `data/logs/${name}.log`]) {
      expect(readFileSync(join(home, file), 'utf8')).not.toContain(SECRET);
    }

    writeFileSync(envFile, 'A=edited\n');
    await moatOk(home, ['restart', name], secretsEnv);
    expect(await env('A')).toBe('edited');
    expect(await env('C')).toBe(SECRET);
    await moatOk(home, ['rm', name]);
  });

  it('refuses to start a workload whose secret is missing, saving nothing', async () => {
    const name = uniqueName('nosecret');
    const result = await moat(
      home,
      ['run', '--transport', 'stdio', '--name', name, '--secret', 'absent,target=X', image],
      secretsEnv,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('secret "absent"');
    expect(await workload(home, name)).toBeUndefined();
  });
});
