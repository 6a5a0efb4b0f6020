import { ProtocolError } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { Catalog, templatePrefix, type MemberLists } from './catalog.js';
import { decodeCursor, encodeCursor } from './cursor.js';

const lists = (member: string, tools: string[]): MemberLists => ({
  member,
  tools: tools.map((name) => ({ name, inputSchema: { type: 'object' as const } })),
  prompts: [],
  resources: [],
  resourceTemplates: [],
});

function invalid(run: () => unknown): ProtocolError {
  try {
    run();
  } catch (err) {
    if (err instanceof ProtocolError) return err;
    throw err;
  }
  throw new Error('no error');
}

describe('cursors', () => {
  it('round-trip a position and are opaque base64url', () => {
    const cursor = encodeCursor({ list: 'tools', member: 'time', index: 3 });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, 'tools')).toEqual({ list: 'tools', member: 'time', index: 3 });
  });

  it('refuse with -32602 what is not theirs: garbage, another list, a bad index', () => {
    expect(invalid(() => decodeCursor('not a cursor!', 'tools')).code).toBe(-32602);
    const prompts = encodeCursor({ list: 'prompts', member: 'a', index: 0 });
    expect(invalid(() => decodeCursor(prompts, 'tools')).code).toBe(-32602);
    const negative = Buffer.from(JSON.stringify({ l: 'tools', m: 'a', i: -1 })).toString('base64url');
    expect(invalid(() => decodeCursor(negative, 'tools')).code).toBe(-32602);
  });
});

describe('Catalog pages', () => {
  const catalog = () =>
    new Catalog([lists('b', ['b1', 'b2', 'b3']), lists('a', ['a1', 'a2'])], undefined, new Map());
  const names = (items: { name: string }[]) => items.map((t) => t.name);

  it('walk every member in rank, across member boundaries', () => {
    const c = catalog();
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = c.page<{ name: string }>('tools', cursor, 2);
      seen.push(...names(page.items));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual(['a__a1', 'a__a2', 'b__b1', 'b__b2', 'b__b3']);
    expect(pages).toBe(3);
  });

  it('keep their place when a member before the page boundary leaves', () => {
    const first = catalog().page<{ name: string }>('tools', undefined, 3);
    expect(names(first.items)).toEqual(['a__a1', 'a__a2', 'b__b1']);
    const without = new Catalog([lists('b', ['b1', 'b2', 'b3'])], undefined, new Map());
    expect(names(without.page<{ name: string }>('tools', first.nextCursor, 3).items)).toEqual([
      'b__b2',
      'b__b3',
    ]);
  });

  it('routes a URI by the longest template prefix, and names an unowned URI in a -32602', () => {
    expect(templatePrefix('file:///logs/{name}')).toBe('file:///logs/');
    const c = new Catalog(
      [
        { ...lists('a', []), resourceTemplates: [{ name: 't', uriTemplate: 'file:///{path}' }] },
        { ...lists('b', []), resourceTemplates: [{ name: 't', uriTemplate: 'file:///logs/{name}' }] },
      ],
      undefined,
      new Map(),
    );
    expect(c.resourceOwner('file:///logs/today')).toBe('b');
    expect(c.resourceOwner('file:///etc/x')).toBe('a');
    const err = invalid(() => c.resourceOwner('mem://nowhere'));
    expect(err.code).toBe(-32602);
    expect(err.message).toContain('mem://nowhere');
  });
});
