import { describe, expect, it } from 'vitest';
import { runConfigSchema, type RunConfigInput } from '../../config/runconfig.js';
import { EnvironmentSecretsProvider } from '../../secrets/environment.js';
import { authorizationServerMetadataUrls, parseWwwAuthenticate } from './discovery.js';
import { remoteOAuthRequested, resolveRemoteOAuthSettings } from './oauth-settings.js';
import { validateForwardHeaderName } from './static-headers.js';
import { resolveTokenExchangeSettings } from './token-exchange.js';
import { checkDiscoveredUrl } from './url-guard.js';

const secrets = new EnvironmentSecretsProvider({ MOAT_SECRET_CS: 'client-secret' });
const config = (extra: Partial<RunConfigInput>) =>
  runConfigSchema.parse({
    image: 'https://remote.example/mcp',
    remote_url: 'https://remote.example/mcp',
    name: 'w',
    transport: 'streamable-http',
    host: '127.0.0.1',
    port: 0,
    ...extra,
  });

describe('parseWwwAuthenticate', () => {
  it.each([
    [
      'Bearer resource_metadata="https://r.example/.well-known/oauth-protected-resource/mcp", scope="a b"',
      {
        scheme: 'bearer',
        params: {
          resource_metadata: 'https://r.example/.well-known/oauth-protected-resource/mcp',
          scope: 'a b',
        },
      },
    ],
    [
      'Bearer error="insufficient_scope", scope=read',
      { scheme: 'bearer', params: { error: 'insufficient_scope', scope: 'read' } },
    ],
    ['Bearer realm="x\\"y"', { scheme: 'bearer', params: { realm: 'x"y' } }],
    ['Bearer', { scheme: 'bearer', params: {} }],
  ])('%s', (header, expected) => expect(parseWwwAuthenticate(header)).toEqual(expected));

  it('returns undefined without a header', () => expect(parseWwwAuthenticate(undefined)).toBeUndefined());
});

describe('authorization server metadata URLs (MCP order)', () => {
  it('inserts the path for an issuer with a path, then appends for OIDC', () => {
    expect(authorizationServerMetadataUrls('https://as.example/tenant1').map((u) => u.url)).toEqual([
      'https://as.example/.well-known/oauth-authorization-server/tenant1',
      'https://as.example/.well-known/openid-configuration/tenant1',
      'https://as.example/tenant1/.well-known/openid-configuration',
    ]);
    expect(authorizationServerMetadataUrls('https://as.example').map((u) => u.url)).toEqual([
      'https://as.example/.well-known/oauth-authorization-server',
      'https://as.example/.well-known/openid-configuration',
    ]);
  });
});

describe('checkDiscoveredUrl (SSRF guard)', () => {
  it.each([
    ['https://as.example/x', 'https://remote.example/mcp'],
    ['http://127.0.0.1:9000', 'http://127.0.0.1:8000/mcp'],
    ['https://10.0.0.5/token', 'https://10.0.0.4/mcp'],
  ])('allows %s for %s', (url, remote) =>
    expect(checkDiscoveredUrl(url, remote, 'x').href).toBe(new URL(url).href),
  );

  it.each([
    ['http://as.example/x', 'https://remote.example/mcp', /must use https/],
    ['http://127.0.0.1:9000', 'https://remote.example/mcp', /must use https/],
    ['https://169.254.169.254/latest', 'https://remote.example/mcp', /link-local/],
    ['https://[fe80::1]/x', 'https://remote.example/mcp', /link-local/],
    // IPv4-mapped IPv6 spellings of link-local (the URL parser turns the first into the second).
    ['https://[::ffff:169.254.169.254]/x', 'https://remote.example/mcp', /link-local/],
    ['https://[::ffff:a9fe:a9fe]/x', 'https://10.0.0.4/mcp', /link-local/],
    ['https://[fd00:ec2::254]/x', 'https://remote.example/mcp', /metadata/],
    ['https://metadata.google.internal/x', 'https://remote.example/mcp', /metadata/],
    ['https://[::ffff:a00:5]/token', 'https://remote.example/mcp', /private address/],
    [
      'https://10.0.0.5/token',
      'https://remote.example/mcp',
      /private address but the remote server .* is public/,
    ],
    ['https://127.0.0.1/token', 'https://remote.example/mcp', /private address/],
    ['not a url', 'https://remote.example/mcp', /is not a valid URL/],
  ])('refuses %s for %s', (url, remote, error) =>
    expect(() => checkDiscoveredUrl(url, remote, 'x')).toThrow(error),
  );
});

describe('remote OAuth settings', () => {
  it('is requested by --remote-auth or any OAuth endpoint or client flag, for remote URLs only', () => {
    expect(remoteOAuthRequested(config({}))).toBe(false);
    expect(remoteOAuthRequested(config({ remote_auth_config: { bearer_token_file: '/t' } }))).toBe(false);
    expect(remoteOAuthRequested(config({ remote_auth_config: { enabled: true } }))).toBe(true);
    expect(remoteOAuthRequested(config({ remote_auth_config: { client_id: 'c' } }))).toBe(true);
    expect(
      remoteOAuthRequested(config({ remote_url: undefined, remote_auth_config: { enabled: true } })),
    ).toBe(false);
  });

  it('applies defaults and converts the nanosecond timeout', async () => {
    const s = await resolveRemoteOAuthSettings(
      config({
        remote_auth_config: {
          enabled: true,
          timeout: 45e9,
          scopes: ['a,b', 'c'],
          client_id: 'id',
          client_secret: 'CS,target=oauth_secret',
        },
      }),
      secrets,
    );
    expect(s).toMatchObject({
      callbackPort: 8666,
      timeoutMs: 45_000,
      scopes: ['a', 'b', 'c'],
      clientSecret: 'client-secret',
      skipBrowser: false,
    });
  });

  it.each([
    [
      { issuer: 'https://as', authorize_url: 'https://as/a', token_url: 'https://as/t' },
      /cannot be combined/,
    ],
    [{ authorize_url: 'https://as/a' }, /must be given together/],
    [{ authorize_url: 'https://as/a', token_url: 'https://as/t' }, /need --remote-auth-client-id/],
    [{ issuer: 'ftp://as' }, /--remote-auth-issuer: ftp:\/\/as must be an https URL/],
    [{ issuer: 'nope' }, /--remote-auth-issuer: "nope" is not a valid URL/],
    [
      { client_id: 'c', client_secret_file: '/does/not/exist' },
      /--remote-auth-client-secret-file: cannot read \/does\/not\/exist: ENOENT/,
    ],
  ])('rejects %j', async (auth, error) => {
    await expect(
      resolveRemoteOAuthSettings(config({ remote_auth_config: { enabled: true, ...auth } }), secrets),
    ).rejects.toThrow(error);
  });
});

describe('forwarded header names', () => {
  it.each(['X-Api-Key', 'Authorization', 'x_custom'])('allows %s', (name) =>
    expect(() => validateForwardHeaderName(name, '--remote-forward-headers')).not.toThrow(),
  );
  it.each([
    ['Host', /the Host header cannot be set/],
    ['transfer-encoding', /cannot be set/],
    ['X-Forwarded-For', /cannot be set/],
    ['Bad Name', /is not a valid HTTP header name/],
  ])('refuses %s', (name, error) =>
    expect(() => validateForwardHeaderName(name, '--remote-forward-headers')).toThrow(error),
  );
});

describe('token exchange settings', () => {
  it('defaults to access_token and the Authorization header; a header name switches to it', async () => {
    expect(await resolveTokenExchangeSettings({ token_url: 'https://sts/token' }, secrets, {})).toMatchObject(
      {
        subjectTokenType: 'access_token',
        headerName: 'Authorization',
        scopes: [],
      },
    );
    expect(
      await resolveTokenExchangeSettings(
        { token_url: 'https://sts/token', client_id: 'c', external_token_header_name: 'X-Token' },
        secrets,
        { MOAT_TOKEN_EXCHANGE_CLIENT_SECRET: 'from-env' },
      ),
    ).toMatchObject({ headerName: 'X-Token', clientSecret: 'from-env' });
  });

  it.each([
    [{ token_url: 'x' }, /--token-exchange-url: "x" is not a valid URL/],
    [{ token_url: 'https://sts', client_secret: 'CS,target=t' }, /needs --token-exchange-client-id/],
    [{ token_url: 'https://sts', header_strategy: 'custom' as const }, /needs --token-exchange-header-name/],
    [
      { token_url: 'https://sts', external_token_header_name: 'Host' },
      /--token-exchange-header-name: the Host header cannot be set/,
    ],
  ])('rejects %j', async (te, error) => {
    await expect(resolveTokenExchangeSettings(te, secrets, {})).rejects.toThrow(error);
  });
});
