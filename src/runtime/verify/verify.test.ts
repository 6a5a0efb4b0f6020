import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { remoteImage } from './oci.js';
import { loadTrustedRoot, trustedRootPath } from './policy.js';
import { hasProvenance } from './provenance.js';

describe('remoteImage', () => {
  it.each([
    ['ghcr.io/org/server:1.0', { registry: 'ghcr.io', repository: 'org/server', reference: '1.0' }],
    ['127.0.0.1:5000/a/b', { registry: '127.0.0.1:5000', repository: 'a/b', reference: 'latest' }],
    ['localhost/x@sha256:abc', { registry: 'localhost', repository: 'x', reference: 'sha256:abc' }],
    ['alpine:3', { registry: 'registry-1.docker.io', repository: 'library/alpine', reference: '3' }],
    ['acme/tool', { registry: 'registry-1.docker.io', repository: 'acme/tool', reference: 'latest' }],
  ])('%s', (image, expected) => {
    expect(remoteImage(image)).toEqual(expected);
  });
});

describe('hasProvenance', () => {
  it('needs at least one field to check (sigstore_url alone checks nothing)', () => {
    expect(hasProvenance(undefined)).toBe(false);
    expect(hasProvenance({})).toBe(false);
    expect(hasProvenance({ sigstore_url: 'tuf-repo-cdn.sigstore.dev' })).toBe(false);
    expect(hasProvenance({ cert_issuer: 'https://token.actions.githubusercontent.com' })).toBe(true);
  });
});

describe('trusted root', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('is read from MOAT_SIGSTORE_TRUSTED_ROOT, else from the configuration directory', () => {
    expect(trustedRootPath({ MOAT_SIGSTORE_TRUSTED_ROOT: '/x/root.json' })).toBe('/x/root.json');
    expect(trustedRootPath({ MOAT_HOME: '/h' })).toBe('/h/config/sigstore/trusted_root.json');
  });

  it('says why it is missing or unusable instead of throwing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'moat-trust-'));
    dirs.push(dir);
    expect(loadTrustedRoot(join(dir, 'none.json'))).toEqual({
      missing: expect.stringContaining(`no Sigstore trusted root at ${join(dir, 'none.json')}`),
    });
    writeFileSync(join(dir, 'bad.json'), '{not json');
    expect(loadTrustedRoot(join(dir, 'bad.json'))).toEqual({
      missing: expect.stringContaining('is not valid trusted_root.json'),
    });
    writeFileSync(
      join(dir, 'ok.json'),
      JSON.stringify({ mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1', tlogs: [] }),
    );
    expect(loadTrustedRoot(join(dir, 'ok.json'))).toMatchObject({ tlogs: [] });
  });
});
