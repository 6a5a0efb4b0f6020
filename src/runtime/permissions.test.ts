import { describe, expect, it } from 'vitest';
import {
  builtinProfile,
  collectMounts,
  outboundPolicy,
  parseMountDeclaration,
  parseVolume,
} from './permissions.js';

describe('builtin profiles', () => {
  it('none and its alias stdio deny outbound; network allows it', () => {
    expect(outboundPolicy(builtinProfile('none')!)).toEqual({ kind: 'deny-all' });
    expect(outboundPolicy(builtinProfile('stdio')!)).toEqual({ kind: 'deny-all' });
    expect(outboundPolicy(builtinProfile('network')!)).toEqual({ kind: 'allow-all' });
    expect(builtinProfile('other')).toBeUndefined();
  });

  it('returns copies, so callers cannot change the builtins', () => {
    builtinProfile('network')!.privileged = true;
    expect(builtinProfile('network')!.privileged).toBeUndefined();
  });
});

describe('outboundPolicy', () => {
  it('treats a profile without a network section as deny-all (least privilege)', () => {
    expect(outboundPolicy({ read: ['/x'] })).toEqual({ kind: 'deny-all' });
  });

  it('turns allow_host/allow_port into an allowlist and checks host entries', () => {
    expect(
      outboundPolicy({ network: { outbound: { allow_host: ['api.github.com', '.example.com'] } } }),
    ).toEqual({
      kind: 'allowlist',
      allowHosts: ['api.github.com', '.example.com'],
      allowPorts: [],
    });
    expect(outboundPolicy({ network: { outbound: { allow_port: [443] } } })).toEqual({
      kind: 'allowlist',
      allowHosts: [],
      allowPorts: [443],
    });
    expect(() => outboundPolicy({ network: { outbound: { allow_host: ['http://x.com/'] } } })).toThrow(
      /allow_host entry "http:\/\/x.com\/" is not a hostname/,
    );
  });

  it('fails loudly for inbound allowlists', () => {
    expect(() => outboundPolicy({ network: { inbound: { allow_host: ['a'] } } })).toThrow(/not implemented/);
  });
});

describe('mounts', () => {
  it('parses path, host:container and -v forms; resolves relative host paths', () => {
    expect(parseMountDeclaration('/data', true, '/cwd')).toEqual({
      source: '/data',
      target: '/data',
      readOnly: true,
    });
    expect(parseMountDeclaration('./d:/in', false, '/cwd')).toEqual({
      source: '/cwd/d',
      target: '/in',
      readOnly: false,
    });
    expect(parseVolume('rel:/in:ro', '/cwd')).toEqual({ source: '/cwd/rel', target: '/in', readOnly: true });
    expect(parseVolume('/a:/b', '/cwd')).toEqual({ source: '/a', target: '/b', readOnly: false });
  });

  it('rejects shell metacharacters, relative container paths and malformed values', () => {
    for (const bad of ['/a$(id):/b', '/a;b:/b', '/a|b:/b', '/a`x`:/b', '/a&:/b', '/a\0:/b'])
      expect(() => parseMountDeclaration(bad, true, '/')).toThrow(/forbidden character/);
    expect(() => parseMountDeclaration('/a:rel', true, '/')).toThrow(/must be absolute/);
    expect(() => parseVolume('/only', '/')).toThrow(/host-path:container-path\[:ro\]/);
    expect(() => parseMountDeclaration('file://x:/y', true, '/')).toThrow(/not implemented/);
  });

  it('merges duplicates (read-write wins) and rejects two sources on one target', () => {
    const mounts = collectMounts({ read: ['/a:/x'], write: ['/a:/x'] }, ['/b:/y:ro'], '/');
    expect(mounts).toEqual([
      { source: '/a', target: '/x', readOnly: false },
      { source: '/b', target: '/y', readOnly: true },
    ]);
    expect(() => collectMounts({ read: ['/a:/x'] }, ['/c:/x'], '/')).toThrow(/two mounts target \/x/);
  });
});
