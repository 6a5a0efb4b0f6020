import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAuthzConfigFile, parseAuthzConfig } from './config.js';
import { loadAuthz } from './index.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'moat-authz-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const good = {
  version: '1.0',
  type: 'cedarv1',
  cedar: {
    policies: ['permit(principal, action, resource);'],
    entities_json: '[]',
    group_claim_name: 'teams',
  },
};

describe('authz config files', () => {
  it('reads the ToolHive JSON and YAML formats', async () => {
    const json = join(dir, 'a.json');
    await writeFile(json, JSON.stringify(good));
    expect((await loadAuthzConfigFile(json)).config.cedar.group_claim_name).toBe('teams');
    const yaml = join(dir, 'a.yaml');
    await writeFile(
      yaml,
      'version: "1.0"\ntype: cedarv1\ncedar:\n  policies:\n    - permit(principal, action, resource);\n',
    );
    expect((await loadAuthzConfigFile(yaml)).config.cedar.policies).toHaveLength(1);
  });

  it.each([
    [
      '{"version": "1.0", "type": "cedarv1", "cedar": {"policies": []}}',
      /field cedar\.policies: needs at least one policy/,
    ],
    ['{"type": "httpv1", "cedar": {"policies": ["x"]}}', /field type: type httpv1 .* not implemented yet/],
    ['{"type": "opa", "cedar": {"policies": ["x"]}}', /field type: must be cedarv1/],
    ['{"type": "cedarv1", "cedar": {"policies": ["x"], "polices": []}}', /unknown field cedar\.polices/],
    [
      '{"type": "cedarv1", "cedar": {"policies": ["x"], "group_entity_type": "A::B"}}',
      /field cedar\.group_entity_type: must be a plain entity type name/,
    ],
    ['{"type": "cedarv1",\n "cedar": {"policies": ["x"],,}}', /authz\.json \(line 2, column \d+\)/],
    [
      '{"type": "cedarv1", "cedar": {"policies": ["x"], "multi_valued_claims": ["groups"]}}',
      /multi_valued_claims is not implemented yet/,
    ],
    ['type: cedarv1\n  bad: indentation\n', /\(line \d+, column \d+\)/],
  ])('rejects %s', (text, message) => {
    expect(() => parseAuthzConfig(text, 'authz.json')).toThrow(message);
  });

  it('explains unreadable files and wrong extensions', async () => {
    await expect(loadAuthzConfigFile(join(dir, 'missing.json'))).rejects.toThrow(
      /--authz-config: cannot read/,
    );
    const txt = join(dir, 'a.txt');
    await writeFile(txt, '{}');
    await expect(loadAuthzConfigFile(txt)).rejects.toThrow(/must be a \.json, \.yaml or \.yml file/);
  });

  it('builds the policy from an inline RunConfig block and passes on the claim names', async () => {
    const authz = await loadAuthz({ authz_config: good });
    expect(authz?.policy.name).toBe('authz');
    expect(authz?.groupClaimName).toBe('teams');
    await expect(loadAuthz({})).resolves.toBeUndefined();
    await expect(loadAuthz({ authz_config: good, authz_config_path: '/x.json' })).rejects.toThrow(
      /mutually exclusive/,
    );
  });
});
