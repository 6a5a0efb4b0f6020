import { describe, expect, it } from 'vitest';
import { memberRank, resolveNames, resolveUris, type MemberEntry, type NameClaims } from './names.js';

const entries = (member: string, ...names: string[]): MemberEntry[] =>
  names.map((name) => ({ member, name }));
const exposedOf = (r: { exposed: { member: string; name: string; exposed: string }[] }) =>
  Object.fromEntries(r.exposed.map((e) => [e.exposed, `${e.member}:${e.name}`]));

describe('memberRank', () => {
  it('puts the members of order first, in its order, and the others after by name', () => {
    expect(['zeta', 'beta', 'alpha', 'gamma'].sort(memberRank(['gamma', 'zeta']))).toEqual([
      'gamma',
      'zeta',
      'alpha',
      'beta',
    ]);
  });
});

describe('resolveNames: prefix', () => {
  it('is the default and names each entry <member>__<name>, so nothing conflicts', () => {
    const r = resolveNames(
      'tool',
      [...entries('time', 'now', 'echo'), ...entries('fetch', 'echo')],
      undefined,
    );
    expect(exposedOf(r)).toEqual({
      time__now: 'time:now',
      time__echo: 'time:echo',
      fetch__echo: 'fetch:echo',
    });
    expect(r.shadowed).toEqual([]);
  });

  it('uses the configured separator', () => {
    const r = resolveNames('prompt', entries('a', 'p'), { strategy: 'prefix', separator: '.' });
    expect(exposedOf(r)).toEqual({ 'a.p': 'a:p' });
  });

  it('never renames an exposed name when a member joins', () => {
    const before = resolveNames('tool', entries('b', 'x'), undefined);
    const after = resolveNames('tool', [...entries('a', 'x'), ...entries('b', 'x')], undefined);
    expect(exposedOf(after)).toMatchObject(exposedOf(before));
  });
});

describe('resolveNames: priority', () => {
  it('keeps names; the member first in order wins a conflict and the others are reported', () => {
    const r = resolveNames('tool', [...entries('a', 'echo', 'only-a'), ...entries('b', 'echo')], {
      strategy: 'priority',
      order: ['b'],
    });
    expect(exposedOf(r)).toEqual({ echo: 'b:echo', 'only-a': 'a:only-a' });
    expect(r.shadowed).toEqual([{ kind: 'tool', member: 'a', name: 'echo', by: 'b' }]);
  });

  it('falls back to member names when order does not decide', () => {
    const r = resolveNames('tool', [...entries('zed', 'x'), ...entries('amy', 'x')], {
      strategy: 'priority',
    });
    expect(exposedOf(r)).toEqual({ x: 'amy:x' });
    expect(r.shadowed).toEqual([{ kind: 'tool', member: 'zed', name: 'x', by: 'amy' }]);
  });

  it('is deterministic whatever order the entries come in', () => {
    const naming = { strategy: 'priority' as const, order: ['c'] };
    const one = resolveNames(
      'tool',
      [...entries('a', 'x'), ...entries('c', 'x'), ...entries('b', 'x')],
      naming,
    );
    const two = resolveNames(
      'tool',
      [...entries('b', 'x'), ...entries('a', 'x'), ...entries('c', 'x')],
      naming,
    );
    expect(exposedOf(one)).toEqual(exposedOf(two));
    expect(one.shadowed.map((s) => s.member)).toEqual(['a', 'b']);
  });

  it('a joining member that is last in rank changes nothing already exposed', () => {
    const naming = { strategy: 'priority' as const };
    const before = resolveNames('tool', entries('a', 'x', 'y'), naming);
    const after = resolveNames('tool', [...entries('a', 'x', 'y'), ...entries('b', 'x', 'z')], naming);
    expect(exposedOf(after)).toEqual({ ...exposedOf(before), z: 'b:z' });
  });
});

describe('resolveNames: manual', () => {
  const naming = {
    strategy: 'manual' as const,
    overrides: {
      a: { tools: { search: { name: 'web_search' }, debug: { hidden: true } } },
      b: { prompts: { greet: { hidden: true } } },
    },
  };

  it('renames and hides per member; hidden entries are neither exposed nor reported', () => {
    const r = resolveNames('tool', [...entries('a', 'search', 'debug'), ...entries('b', 'search')], naming);
    expect(exposedOf(r)).toEqual({ web_search: 'a:search', search: 'b:search' });
    expect(r.shadowed).toEqual([]);
  });

  it('applies the prompts section to prompts only', () => {
    const r = resolveNames('prompt', [...entries('a', 'debug'), ...entries('b', 'greet')], naming);
    expect(exposedOf(r)).toEqual({ debug: 'a:debug' });
  });

  it('prefixes the losers of a conflict left after overrides and reports them', () => {
    const r = resolveNames('tool', [...entries('a', 'echo'), ...entries('b', 'echo')], naming, new Map());
    expect(exposedOf(r)).toEqual({ echo: 'a:echo', b__echo: 'b:echo' });
    expect(r.shadowed).toEqual([{ kind: 'tool', member: 'b', name: 'echo', by: 'a', exposedAs: 'b__echo' }]);
  });

  it('keeps an exposed name with its holder when a member earlier in rank joins', () => {
    const claims: NameClaims = new Map();
    const before = resolveNames('tool', entries('b', 'echo'), naming, claims);
    expect(exposedOf(before)).toEqual({ echo: 'b:echo' });
    const after = resolveNames('tool', [...entries('a', 'echo'), ...entries('b', 'echo')], naming, claims);
    expect(exposedOf(after)).toEqual({ echo: 'b:echo', a__echo: 'a:echo' });
    expect(after.shadowed).toEqual([
      { kind: 'tool', member: 'a', name: 'echo', by: 'b', exposedAs: 'a__echo' },
    ]);
  });

  it('leaves out, reported, an entry whose prefixed name is taken too', () => {
    const r = resolveNames('tool', [...entries('a', 'x', 'b__x'), ...entries('b', 'x')], {
      strategy: 'manual',
    });
    expect(exposedOf(r)).toEqual({ x: 'a:x', b__x: 'a:b__x' });
    expect(r.shadowed).toEqual([{ kind: 'tool', member: 'b', name: 'x', by: 'a' }]);
  });
});

describe('resolveUris', () => {
  it('keeps URIs; the same URI from two members goes to the first in rank, reported', () => {
    const r = resolveUris(
      'resource',
      [...entries('b', 'file:///a', 'file:///b'), ...entries('a', 'file:///a')],
      {
        strategy: 'prefix',
        order: ['b'],
      },
    );
    expect(exposedOf(r)).toEqual({ 'file:///a': 'b:file:///a', 'file:///b': 'b:file:///b' });
    expect(r.shadowed).toEqual([{ kind: 'resource', member: 'a', name: 'file:///a', by: 'b' }]);
  });
});
