import { describe, expect, it } from 'vitest';
import { applyPatch } from './json-patch.js';

const doc = () => ({
  mcp_request: {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'echo', arguments: { a: 1, list: [1, 2] } },
  },
  principal: { sub: 'alice' },
});

describe('applyPatch (RFC 6902, scoped to /mcp_request/)', () => {
  it('applies add, replace, remove, move, copy and test in order, without touching the input', () => {
    const input = doc();
    const out = applyPatch(input, [
      { op: 'test', path: '/mcp_request/params/name', value: 'echo' },
      { op: 'replace', path: '/mcp_request/params/arguments/a', value: 2 },
      { op: 'add', path: '/mcp_request/params/arguments/list/1', value: 9 },
      { op: 'add', path: '/mcp_request/params/arguments/list/-', value: 3 },
      { op: 'copy', from: '/mcp_request/params/name', path: '/mcp_request/params/arguments/b' },
      { op: 'move', from: '/mcp_request/params/arguments/b', path: '/mcp_request/params/arguments/c' },
      { op: 'remove', path: '/mcp_request/params/arguments/list/0' },
      { op: 'add', path: '/mcp_request/params/arguments/x~1y', value: true },
    ]);
    expect(out.mcp_request.params.arguments).toEqual({ a: 2, list: [9, 2, 3], c: 'echo', 'x/y': true });
    expect(input).toEqual(doc());
  });

  it.each([
    [[{ op: 'replace', path: '/principal/sub', value: 'root' }], /path must start with \/mcp_request\//],
    [[{ op: 'copy', from: '/principal/sub', path: '/mcp_request/params/name' }], /from must start with/],
    [[{ op: 'replace', path: '/mcp_request/params/missing', value: 1 }], /does not exist/],
    [[{ op: 'remove', path: '/mcp_request/params/arguments/list/5' }], /bad array index/],
    [[{ op: 'test', path: '/mcp_request/params/name', value: 'rm' }], /test failed/],
    [[{ op: 'replace', path: '/mcp_request/params/name' }], /needs a value/],
    [[{ op: 'evil', path: '/mcp_request/x' }], /unknown op/],
    [[{ op: 'move', from: '/mcp_request/params', path: '/mcp_request/params/inner' }], /into itself/],
    [{ op: 'add' }, /must be an array/],
    [['x'], /is not an object/],
  ])('refuses %j', (patch, message) => {
    expect(() => applyPatch(doc(), patch)).toThrow(message);
  });

  it('compares test values structurally', () => {
    expect(() =>
      applyPatch(doc(), [
        { op: 'test', path: '/mcp_request/params/arguments', value: { list: [1, 2], a: 1 } },
      ]),
    ).not.toThrow();
  });
});
