import { describe, expect, it } from 'vitest';
import { bearerToken, MAX_TOKEN_LENGTH } from './authenticate.js';
import { identityFromClaims } from './identity.js';
import { TokenRejectedError } from './token-validator.js';
import { challengeHeader, metadataDocument, metadataUrl, resourceUrl } from './resource-metadata.js';

describe('bearerToken (RFC 6750 §2.1)', () => {
  it.each([
    [undefined, { kind: 'missing' }],
    ['   ', { kind: 'missing' }],
    ['Bearer abc.def-_~+/=', { kind: 'present', value: 'abc.def-_~+/=' }],
    ['bearer abc', { kind: 'present', value: 'abc' }],
    ['BEARER   abc  ', { kind: 'present', value: 'abc' }],
    ['Basic abc', { kind: 'malformed', reason: 'only Bearer tokens are accepted' }],
    ['Token abc', { kind: 'malformed', reason: 'only Bearer tokens are accepted' }],
    ['Bearer', { kind: 'malformed', reason: 'the Authorization header must be "Bearer <token>"' }],
    ['Bearer a b', { kind: 'malformed', reason: 'the Authorization header must be "Bearer <token>"' }],
    [
      'Bearer a=b',
      { kind: 'malformed', reason: 'the bearer token contains characters RFC 6750 does not allow' },
    ],
    [
      'Bearer a\tb',
      { kind: 'malformed', reason: 'the bearer token contains characters RFC 6750 does not allow' },
    ],
  ])('%j', (header, expected) => {
    expect(bearerToken(header)).toEqual(expected);
  });

  it('refuses tokens over the size cap before looking at them', () => {
    expect(bearerToken(`Bearer ${'a'.repeat(MAX_TOKEN_LENGTH)}`).kind).toBe('present');
    expect(bearerToken(`Bearer ${'a'.repeat(MAX_TOKEN_LENGTH + 1)}`)).toEqual({
      kind: 'malformed',
      reason: 'the bearer token is too large',
    });
  });
});

describe('protected-resource metadata', () => {
  const settings = { issuer: 'https://idp.example', scopesSupported: ['openid', 'mcp:tools'] };

  it('derives the resource from the listener unless --resource-url is set', () => {
    expect(resourceUrl(settings, 'http://127.0.0.1:8080', '/mcp')).toBe('http://127.0.0.1:8080/mcp');
    expect(resourceUrl(settings, 'https://gw.example/team/', '/sse')).toBe('https://gw.example/team/sse');
    expect(
      resourceUrl({ ...settings, resourceUrl: 'https://mcp.example/mcp' }, 'http://127.0.0.1:1', '/mcp'),
    ).toBe('https://mcp.example/mcp');
  });

  it('serves the metadata at the path-inserted well-known URL (RFC 9728 §3.1)', () => {
    expect(metadataUrl('https://mcp.example/mcp')).toBe(
      'https://mcp.example/.well-known/oauth-protected-resource/mcp',
    );
    expect(metadataUrl('https://mcp.example/')).toBe(
      'https://mcp.example/.well-known/oauth-protected-resource',
    );
    expect(metadataUrl('https://mcp.example:8443/a/b/')).toBe(
      'https://mcp.example:8443/.well-known/oauth-protected-resource/a/b',
    );
  });

  it('lists the issuer, header-only bearer tokens and the scopes', () => {
    expect(metadataDocument(settings, 'https://mcp.example/mcp')).toEqual({
      resource: 'https://mcp.example/mcp',
      authorization_servers: ['https://idp.example'],
      bearer_methods_supported: ['header'],
      scopes_supported: ['openid', 'mcp:tools'],
    });
    expect(metadataDocument({ scopesSupported: ['openid'] }, 'https://x/mcp')).not.toHaveProperty(
      'authorization_servers',
    );
  });

  it('builds the challenge, keeping quoted values within RFC 6750 characters', () => {
    expect(challengeHeader('https://mcp.example/mcp', ['openid'], {})).toBe(
      'Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp", scope="openid"',
    );
    expect(
      challengeHeader('https://x/mcp', ['a', 'b'], {
        error: 'insufficient_scope',
        description: 'needs "b"\n\\',
      }),
    ).toBe(
      'Bearer resource_metadata="https://x/.well-known/oauth-protected-resource/mcp", scope="a b", error="insufficient_scope", error_description="needs b"',
    );
  });
});

describe('identityFromClaims', () => {
  it('refuses claims without a subject as an invalid token', () => {
    expect(() => identityFromClaims({ iss: 'x' })).toThrow(TokenRejectedError);
    expect(() => identityFromClaims({ sub: '' })).toThrow("the token has no 'sub' claim");
  });

  it('takes groups from a configured claim (exact name, then dot path) and adds roles', () => {
    const claims = {
      sub: 'a',
      groups: ['ignored-when-configured'],
      'https://acme.com/teams': ['web'],
      realm_access: { roles: ['admin', 'web'] },
      preferred_username: 'ann',
    };
    expect(identityFromClaims(claims, { groupClaimName: 'https://acme.com/teams' }).groups).toEqual(['web']);
    expect(
      identityFromClaims(claims, {
        groupClaimName: 'realm_access.roles',
        roleClaimName: 'https://acme.com/teams',
      }).groups,
    ).toEqual(['admin', 'web']);
    expect(identityFromClaims({ sub: 'a', 'cognito:groups': 'solo' }).groups).toEqual(['solo']);
    expect(identityFromClaims(claims).name).toBe('ann');
  });
});
