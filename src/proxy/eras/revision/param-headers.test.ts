import { describe, expect, it } from 'vitest';
import { decodeParamValue, paramHeaderDeclarations, paramHeaderProblem } from './param-headers.js';

describe('x-mcp-header declarations', () => {
  it('are found through properties only, and invalid ones are skipped', () => {
    const schema = {
      type: 'object',
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        nested: { type: 'object', properties: { id: { type: 'integer', 'x-mcp-header': 'Id' } } },
        list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } },
        spaced: { type: 'string', 'x-mcp-header': 'My Region' },
        object: { type: 'object', 'x-mcp-header': 'Obj' },
        again: { type: 'string', 'x-mcp-header': 'region' },
      },
    };
    expect(paramHeaderDeclarations(schema)).toEqual([
      { path: ['region'], headerName: 'Region', type: 'string' },
      { path: ['nested', 'id'], headerName: 'Id', type: 'integer' },
    ]);
  });
});

describe('Mcp-Param header values', () => {
  it('decode the Base64 sentinel strictly and take anything else literally', () => {
    expect(decodeParamValue('=?base64?SGVsbG8=?=')).toBe('Hello');
    expect(decodeParamValue('=?base64?SGVsbG8?=')).toBeUndefined();
    expect(decodeParamValue('=?base64?SGVs!!!bG8=?=')).toBeUndefined();
    expect(decodeParamValue('=?base64?SGVsbG8=')).toBe('=?base64?SGVsbG8=');
  });

  const declarations = paramHeaderDeclarations({
    type: 'object',
    properties: {
      on: { type: 'boolean', 'x-mcp-header': 'On' },
      n: { type: 'integer', 'x-mcp-header': 'N' },
    },
  });

  it('must match the arguments', () => {
    expect(
      paramHeaderProblem(
        declarations,
        { on: true, n: 42 },
        { 'mcp-param-on': 'true', 'mcp-param-n': '42.0' },
      ),
    ).toBeUndefined();
    expect(paramHeaderProblem(declarations, { on: false }, { 'mcp-param-on': 'true' })?.code).toBe(-32020);
    expect(paramHeaderProblem(declarations, { n: 1 }, {})?.message).toContain('Mcp-Param-N header is absent');
    expect(paramHeaderProblem(declarations, {}, { 'mcp-param-n': '7' })).toBeUndefined();
  });
});
