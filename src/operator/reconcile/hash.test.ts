import { describe, expect, it } from 'vitest';
import { canonicalJson, configHash } from './hash.js';

describe('configHash', () => {
  it.each<[string, unknown, unknown, boolean]>([
    ['key order at the top', { a: 1, b: 2 }, { b: 2, a: 1 }, true],
    ['key order deep inside', { x: { a: [1, { c: 1, d: 2 }] } }, { x: { a: [1, { d: 2, c: 1 }] } }, true],
    ['an undefined member is absent', { a: 1, b: undefined }, { a: 1 }, true],
    ['a changed value', { a: 1 }, { a: 2 }, false],
    ['a changed type', { a: 1 }, { a: '1' }, false],
    ['array order matters', { a: [1, 2] }, { a: [2, 1] }, false],
    ['an added key', { a: 1 }, { a: 1, b: null }, false],
    ['a nested change', { a: { b: { c: 'x' } } }, { a: { b: { c: 'y' } } }, false],
  ])('%s', (_name, left, right, same) => {
    expect(configHash(left) === configHash(right)).toBe(same);
  });

  it('is 16 lower-case hex digits and stable across calls', () => {
    const hash = configHash({ policies: ['permit(principal, action, resource);'] });
    expect(hash).toMatch(/^[0-9a-f]{16}$/);
    expect(configHash({ policies: ['permit(principal, action, resource);'] })).toBe(hash);
  });

  it('writes sorted JSON', () => {
    expect(canonicalJson({ b: [{ d: 1, c: 2 }], a: 'x' })).toBe('{"a":"x","b":[{"c":2,"d":1}]}');
  });
});
