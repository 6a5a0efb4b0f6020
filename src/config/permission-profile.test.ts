import { describe, expect, it } from 'vitest';
import { networkModeOf } from '../runtime/permissions.js';
import { parsePermissionProfile } from './permission-profile.js';

describe('parsePermissionProfile', () => {
  it('accepts a valid profile', () => {
    const profile = parsePermissionProfile(
      { name: 'x', read: ['/etc/hosts:/h'], network: { mode: 'host' } },
      'p.json',
    );
    expect(profile.read).toEqual(['/etc/hosts:/h']);
    expect(networkModeOf(profile)).toBe('host');
  });

  it('names the unknown field and the source', () => {
    expect(() =>
      parsePermissionProfile({ network: { outbound: { allow_all: true } } }, '/tmp/profile.json'),
    ).toThrow(/invalid permission profile \/tmp\/profile\.json: unknown field network\.outbound\.allow_all/);
  });

  it('names a field of the wrong type with its index, as a usage error', () => {
    let error: unknown;
    try {
      parsePermissionProfile({ network: { outbound: { allow_port: [443, '80'] } } }, 'p.json');
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({
      kind: 'usage',
      message: expect.stringMatching(/field network\.outbound\.allow_port\[1\]: .*number/),
    });
    expect(() => parsePermissionProfile([], 'p.json')).toThrow(/\(document\)/);
  });
});
