import { describe, expect, it } from 'vitest';
import { usageErrorOf } from '../../../test/support/usage-error.js';
import { baseImages, checkRequest, parseProtocolTarget, splitVersion } from './recipe.js';

describe('checkRequest', () => {
  it('accepts the package shapes of each ecosystem', () => {
    for (const [scheme, pkg] of [
      ['npx', '@modelcontextprotocol/server-everything@2025.9.25'],
      ['npx', 'server@latest'],
      ['uvx', 'mcp-server-time'],
      ['uvx', 'pkg[cli]@1.2.0'],
      ['go', 'github.com/org/repo/cmd/server@v1.2.3'],
      ['go', './cmd/server'],
    ] as const) {
      expect(() => checkRequest({ scheme, pkg })).not.toThrow();
    }
  });

  it('refuses packages with shell characters, naming the target and the allowed shape', () => {
    expect(usageErrorOf(() => checkRequest({ scheme: 'npx', pkg: 'x; rm -rf /' }))).toBe(
      'target npx://x; rm -rf /: not a valid npm package name (allowed: [@scope/]name[@version])',
    );
    expect(usageErrorOf(() => checkRequest({ scheme: 'uvx', pkg: 'a$(id)' }))).toContain('PyPI package');
  });

  it('--build-with: uvx only (spec §7), PEP 508 specifiers only', () => {
    expect(usageErrorOf(() => checkRequest({ scheme: 'npx', pkg: 'p', buildWith: ['x'] }))).toBe(
      '--build-with is only supported for uvx:// targets (a PEP 508 constraint); npx:// has no constraint support',
    );
    expect(usageErrorOf(() => checkRequest({ scheme: 'uvx', pkg: 'p', buildWith: ["x'; id"] }))).toContain(
      'not a PEP 508 requirement',
    );
    expect(() => checkRequest({ scheme: 'uvx', pkg: 'p', buildWith: ['httpx>=0.27,<1'] })).not.toThrow();
  });

  it('--runtime-add-package: OS package names only; --ca-cert: PEM only', () => {
    expect(
      usageErrorOf(() => checkRequest({ scheme: 'go', pkg: 'a/b', additionalPackages: ['a b'] })),
    ).toContain('--runtime-add-package "a b"');
    expect(usageErrorOf(() => checkRequest({ scheme: 'go', pkg: 'a/b', caCertPem: 'hello' }))).toBe(
      '--ca-cert: the file holds no PEM certificate (-----BEGIN CERTIFICATE-----)',
    );
  });
});

describe('baseImages', () => {
  it('--runtime-image, else MOAT_BUILD_IMAGE_<SCHEME>, else the public default', () => {
    expect(baseImages('npx', 'localhost/n:1', { MOAT_BUILD_IMAGE_NPX: 'x:1' })).toEqual({
      builder: 'localhost/n:1',
      runtime: 'localhost/n:1',
    });
    expect(baseImages('uvx', undefined, { MOAT_BUILD_IMAGE_UVX: 'localhost/p:1' }).builder).toBe(
      'localhost/p:1',
    );
    expect(baseImages('go', undefined, {})).toEqual({
      builder: 'docker.io/library/golang:1.26-alpine',
      runtime: 'docker.io/library/alpine:3.23',
    });
    expect(baseImages('go', 'g:1', { MOAT_BUILD_RUNTIME_IMAGE_GO: 'r:1' })).toEqual({
      builder: 'g:1',
      runtime: 'r:1',
    });
    expect(usageErrorOf(() => baseImages('go', 'Not An Image', {}))).toContain('--runtime-image');
  });
});

describe('parsing', () => {
  it('splits scheme, package and version', () => {
    expect(parseProtocolTarget('uvx://mcp-server-time')).toEqual({ scheme: 'uvx', pkg: 'mcp-server-time' });
    expect(parseProtocolTarget('docker.io/x')).toBeUndefined();
    expect(splitVersion('@scope/pkg@1.2')).toEqual({ name: '@scope/pkg', version: '1.2' });
    expect(splitVersion('@scope/pkg')).toEqual({ name: '@scope/pkg' });
  });
});
