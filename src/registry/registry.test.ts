import { describe, expect, it } from 'vitest';
import { usageErrorOf } from '../../test/support/usage-error.js';
import { catalogServers } from './index.js';
import { closestNames, editDistance, findServer, mergeRegistries, searchServers } from './lookup.js';
import { fillPlaceholders, placeholdersIn, planFor } from './plan.js';
import { MOAT_META, PUBLISHER_META, parseRegistryDocument, type RegistryServer } from './schema.js';

function server(name: string, extra: Partial<RegistryServer> = {}): RegistryServer {
  return { name, description: `${name} server`, ...extra };
}

/** A server with one stdio package. */
function withPackage(
  name: string,
  registryType: string,
  identifier: string,
  extra: object = {},
): RegistryServer {
  return server(name, { packages: [{ registryType, identifier, transport: { type: 'stdio' }, ...extra }] });
}

describe('registry documents', () => {
  it('accepts servers, API-style { server } items, and the data.servers wrapper', () => {
    const entry = { name: 'io.example/a', description: 'A', packages: [] };
    expect(parseRegistryDocument({ servers: [entry] }, 'f').map((s) => s.name)).toEqual(['io.example/a']);
    expect(parseRegistryDocument({ servers: [{ server: entry, _meta: {} }] }, 'f')[0]?.name).toBe(
      'io.example/a',
    );
    expect(parseRegistryDocument({ data: { servers: [entry] } }, 'f')[0]?.name).toBe('io.example/a');
  });

  it('names the field at fault and the source', () => {
    const bad = {
      servers: [
        { name: 'io.example/a', description: 'A' },
        {
          name: 'io.example/b',
          description: 'B',
          packages: [{ registryType: 'npm', identifier: 'b', transport: { type: 'carrier-pigeon' } }],
        },
      ],
    };
    expect(usageErrorOf(() => parseRegistryDocument(bad, 'reg.json'))).toMatch(
      /^invalid registry reg\.json: field servers\[1\]\.packages\[0\]\.transport\.type: .*stdio.*streamable-http.*sse/,
    );
    expect(
      usageErrorOf(() => parseRegistryDocument({ servers: [{ name: 'fetch', description: 'x' }] }, 'r')),
    ).toMatch(/field servers\[0\]\.name: expected reverse-DNS namespace\/name/);
    expect(usageErrorOf(() => parseRegistryDocument([], 'r'))).toContain('"servers" array');
    const extension = {
      servers: [
        {
          name: 'io.example/a',
          description: 'A',
          _meta: { [PUBLISHER_META]: { [MOAT_META]: { colour: 'red' } } },
        },
      ],
    };
    expect(usageErrorOf(() => parseRegistryDocument(extension, 'r'))).toContain(
      'unknown field servers[0]._meta',
    );
  });

  it('refuses a name listed twice', () => {
    const entry = { name: 'io.example/a', description: 'A' };
    expect(usageErrorOf(() => parseRegistryDocument({ servers: [entry, entry] }, 'r'))).toContain(
      'listed twice',
    );
  });

  it('ships a catalog that validates, with npm, PyPI and remote entries that all plan', () => {
    const servers = catalogServers();
    expect(servers.length).toBeGreaterThanOrEqual(8);
    const kinds = new Set(servers.map((s) => planFor(s).target.split('://')[0]));
    expect(kinds).toEqual(new Set(['npx', 'uvx', 'https']));
  });
});

describe('lookup, merge and search', () => {
  const servers = mergeRegistries(
    [server('io.a/fetch', { title: 'Clock' }), server('io.a/time')],
    [
      server('io.b/fetch', { description: 'another fetch' }),
      server('io.a/time', { description: 'overridden' }),
    ],
  );

  it('lets a later registry override an entry of the same name', () => {
    expect(servers.map((s) => s.name)).toEqual(['io.a/fetch', 'io.a/time', 'io.b/fetch']);
    expect(findServer(servers, 'io.a/time')?.description).toBe('overridden');
  });

  it('finds by full name or a unique short name; an ambiguous short name lists the choices', () => {
    expect(findServer(servers, 'time')?.name).toBe('io.a/time');
    expect(findServer(servers, 'io.b/fetch')?.name).toBe('io.b/fetch');
    expect(findServer(servers, 'nothing')).toBeUndefined();
    expect(usageErrorOf(() => findServer(servers, 'fetch'))).toContain(
      'io.a/fetch, io.b/fetch; use the full name',
    );
  });

  it('searches name, title, description and tags, ignoring case', () => {
    const tagged = server('io.c/x', {
      _meta: { [PUBLISHER_META]: { [MOAT_META]: { tags: ['Weather'] } } },
    });
    const all = [...servers, tagged];
    expect(searchServers(all, 'CLOCK').map((s) => s.name)).toEqual(['io.a/fetch']);
    expect(searchServers(all, 'OVERRIDDEN').map((s) => s.name)).toEqual(['io.a/time']);
    expect(searchServers(all, 'another').map((s) => s.name)).toEqual(['io.b/fetch']);
    expect(searchServers(all, 'weath').map((s) => s.name)).toEqual(['io.c/x']);
    expect(searchServers(all, 'io.a/').length).toBe(2);
  });

  it('suggests close names for a typo', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('fecth', 'fetch')).toBe(1);
    expect(closestNames(catalogServers(), 'img', 1)).toEqual([]);
    const catalog = catalogServers();
    expect(closestNames(catalog, 'fecth')).toEqual(['fetch']);
    expect(closestNames(catalog, 'everythng')[0]).toBe('everything');
    expect(closestNames(catalog, 'io.github.modelcontextprotocol/tme')).toEqual([
      'io.github.modelcontextprotocol/time',
    ]);
    expect(closestNames(catalog, 'zzzzzzzz')).toEqual([]);
  });
});

describe('run plans', () => {
  it('turns npm and pypi packages into npx:// and uvx:// targets with their settings', () => {
    const plan = planFor(
      server('io.x/y', {
        packages: [
          { registryType: 'nuget', identifier: 'Y', transport: { type: 'stdio' } },
          {
            registryType: 'npm',
            identifier: '@x/y',
            version: '1.2.3',
            transport: { type: 'streamable-http', url: 'http://localhost:8081/mcp' },
            packageArguments: [
              { type: 'named', name: '--mode', value: 'fast' },
              { type: 'positional', valueHint: 'dir', isRequired: true },
            ],
            environmentVariables: [
              { name: 'TOKEN', isRequired: true, isSecret: true },
              { name: 'LEVEL', default: 'info' },
            ],
          },
        ],
        _meta: { [PUBLISHER_META]: { [MOAT_META]: { permissions: 'none' } } },
      }),
    );
    expect(plan).toMatchObject({
      kind: 'package',
      target: 'npx://@x/y@1.2.3',
      transport: 'streamable-http',
      targetPort: 8081,
      permissions: 'none',
      args: ['--mode', 'fast'],
      missingArgs: ['dir'],
      env: [
        { name: 'TOKEN', required: true, secret: true },
        { name: 'LEVEL', required: false, secret: false, value: 'info' },
      ],
    });
    const py = planFor(
      server('io.x/p', {
        packages: [{ registryType: 'pypi', identifier: 'p', transport: { type: 'stdio' } }],
      }),
    );
    expect(py.target).toBe('uvx://p');
  });

  it('runs an oci package as its image and a remote by its URL with its headers', () => {
    const oci = (identifier: string, version?: string): string =>
      planFor(
        server('io.x/o', {
          packages: [
            {
              registryType: 'oci',
              identifier,
              ...(version ? { version } : {}),
              transport: { type: 'stdio' },
            },
          ],
        }),
      ).target;
    expect(oci('ghcr.io/x/o:1.0')).toBe('ghcr.io/x/o:1.0');
    expect(oci('ghcr.io/x/o', '2.0')).toBe('ghcr.io/x/o:2.0');
    const remote = planFor(
      server('io.x/r', {
        remotes: [
          {
            type: 'sse',
            url: 'https://r.example/sse',
            headers: [{ name: 'X-Key', isRequired: true, isSecret: true }],
          },
        ],
      }),
    );
    expect(remote).toMatchObject({ kind: 'remote', target: 'https://r.example/sse', transport: 'sse' });
    expect(remote.headers).toEqual([{ name: 'X-Key', required: true, secret: true }]);
  });

  it("gives an oci package the entry's provenance, and no other package type", () => {
    const provenance = {
      repository_uri: 'https://github.com/acme/weather',
      cert_issuer: 'https://token.actions.githubusercontent.com',
    };
    const withProvenance = (registryType: string, identifier: string): RegistryServer => ({
      ...withPackage('io.x/p', registryType, identifier),
      _meta: { [PUBLISHER_META]: { [MOAT_META]: { provenance } } },
    });
    expect(planFor(withProvenance('oci', 'ghcr.io/acme/weather:1.0')).provenance).toEqual(provenance);
    expect(planFor(withProvenance('npm', '@acme/weather')).provenance).toBeUndefined();
  });

  it('names a provenance field it does not know', () => {
    const doc = {
      servers: [
        {
          ...server('io.x/p'),
          _meta: { [PUBLISHER_META]: { [MOAT_META]: { provenance: { signer: 'x' } } } },
        },
      ],
    };
    expect(usageErrorOf(() => parseRegistryDocument(doc, 'r.json'))).toContain(
      `servers[0]._meta.${PUBLISHER_META}.${MOAT_META}.provenance`,
    );
  });

  it("maps an oci package's -e/--env runtime arguments to environment variables and skips -i/--rm", () => {
    const plan = planFor(
      withPackage('io.x/o', 'oci', 'ghcr.io/x/o:1', {
        runtimeArguments: [
          { type: 'positional', value: '-i' },
          { type: 'named', name: '--rm' },
          { type: 'named', name: '-e', value: 'REGION={region}', variables: { region: { default: 'eu' } } },
          { type: 'named', name: '--env', value: 'MODE=a=b', isRequired: true },
        ],
      }),
    );
    expect(plan.env).toEqual([
      { name: 'REGION', required: false, secret: false, value: '{region}' },
      { name: 'MODE', required: true, secret: false, value: 'a=b' },
    ]);
    expect(plan.variables).toEqual([{ name: 'region', required: false, secret: false, value: 'eu' }]);
  });

  it('refuses an oci runtime argument it cannot map safely, naming the entry and the argument', () => {
    const mount = withPackage('io.x/m', 'oci', 'ghcr.io/x/m:1', {
      runtimeArguments: [{ type: 'named', name: '--mount', value: 'type=bind,src=/,dst=/host' }],
    });
    expect(usageErrorOf(() => planFor(mount))).toMatch(
      /^registry server io\.x\/m: the runtime argument "--mount" "type=bind,src=\/,dst=\/host" cannot be applied; moat maps only -e\/--env NAME=VALUE/,
    );
  });

  it('collects the variables of argument and header placeholders; an undeclared one is an error', () => {
    const args = planFor(
      withPackage('io.x/a', 'npm', 'a', {
        packageArguments: [
          {
            type: 'named',
            name: '--root',
            value: '{home}/data',
            variables: { home: { isRequired: true, description: 'home directory' } },
          },
          { type: 'named', name: '--unused', variables: { never: {} } },
        ],
      }),
    );
    expect(args.args).toEqual(['--root', '{home}/data']);
    expect(args.variables).toEqual([
      { name: 'home', description: 'home directory', required: true, secret: false },
    ]);
    const header = (variables: object): RegistryServer =>
      server('io.x/h', {
        remotes: [
          {
            type: 'sse',
            url: 'https://h.example/sse',
            headers: [{ name: 'X-Tenant', value: 'tenant-{tenant}', ...variables }],
          },
        ],
      });
    expect(planFor(header({ variables: { tenant: { default: 't1' } } })).variables).toEqual([
      { name: 'tenant', required: false, secret: false, value: 't1' },
    ]);
    expect(usageErrorOf(() => planFor(header({})))).toBe(
      'registry server io.x/h: X-Tenant uses the placeholder {tenant}, which its variables do not declare',
    );
  });

  it('fills placeholders, naming the value whose placeholder has no value', () => {
    const values = new Map([['home', '/srv']]);
    expect(fillPlaceholders('{home}/data:{home}', values, 'here')).toBe('/srv/data:/srv');
    expect(fillPlaceholders('no {placeholders here', values, 'here')).toBe('no {placeholders here');
    expect(placeholdersIn('{a}-{b_2}-{3x}')).toEqual(['a', 'b_2']);
    expect(usageErrorOf(() => fillPlaceholders('{home}{user}', values, 'argument X'))).toBe(
      'argument X: no value for the placeholder {user}',
    );
  });

  it('names what it cannot run', () => {
    const nuget = server('io.x/n', {
      packages: [{ registryType: 'nuget', identifier: 'N', transport: { type: 'stdio' } }],
    });
    expect(usageErrorOf(() => planFor(nuget))).toBe(
      'registry server io.x/n has only nuget packages; moat runs packages of type oci, npm, pypi and remotes',
    );
  });
});
