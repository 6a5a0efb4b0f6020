import { describe, expect, it } from 'vitest';
import { SessionIds } from './session-id.js';

const KEY = 'k'.repeat(32);
const seed = { protocolVersion: '2025-11-25', capabilities: { sampling: {}, experimental: { big: {} } } };

describe('sealed aggregate session ids', () => {
  it('opens what it issued under the same key, with only the capabilities members may use', () => {
    const id = new SessionIds(KEY).issue(seed);
    expect(id).toMatch(/^[\x21-\x7e]+$/);
    expect(new SessionIds(KEY).open(id)).toEqual({
      protocolVersion: '2025-11-25',
      capabilities: { sampling: {} },
    });
    expect(new SessionIds(KEY).issue(seed)).not.toBe(id);
  });

  it('refuses another key, a changed payload, a changed seal and what is not an id', () => {
    const ids = new SessionIds(KEY);
    const id = ids.issue(seed);
    const [version, payload, mac] = id.split('.') as [string, string, string];
    expect(new SessionIds('x'.repeat(32)).open(id)).toBeUndefined();
    const claimed = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), c: { elicitation: {} } }),
    ).toString('base64url');
    expect(ids.open(`${version}.${claimed}.${mac}`)).toBeUndefined();
    // Every other last character, including those that decode to the same bytes.
    for (const last of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.replace(
      mac.at(-1)!,
      '',
    ))
      expect(ids.open(`${version}.${payload}.${mac.slice(0, -1)}${last}`)).toBeUndefined();
    expect(ids.open(`${version}.${payload}`)).toBeUndefined();
    expect(ids.open(`${id}.x`)).toBeUndefined();
    expect(ids.open('3f0c6b8e-2d1a-4c55-9e0b-4d2f8a1c9b7e')).toBeUndefined();
    expect(() => new SessionIds('short')).toThrow(/16 bytes/);
  });
});
