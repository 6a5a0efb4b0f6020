import { describe, expect, it } from 'vitest';
import { recordMessage, type ExchangeRecord } from './exchange.js';
import {
  InvalidMessage,
  isNotification,
  isRequest,
  isResponse,
  jsonShapeProblem,
  messageTarget,
  parseJsonRpc,
} from './jsonrpc.js';

function rejection(body: string): InvalidMessage {
  try {
    parseJsonRpc(body);
  } catch (err) {
    if (err instanceof InvalidMessage) return err;
    throw err;
  }
  throw new Error(`accepted: ${body}`);
}

describe('parseJsonRpc', () => {
  it('classifies requests, notifications and responses', () => {
    const request = parseJsonRpc('{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
    expect(isRequest(request)).toBe(true);
    const notification = parseJsonRpc(Buffer.from('{"jsonrpc":"2.0","method":"notifications/initialized"}'));
    expect(isNotification(notification)).toBe(true);
    expect(isResponse(parseJsonRpc('{"jsonrpc":"2.0","id":"a","result":{}}'))).toBe(true);
    expect(
      isResponse(parseJsonRpc('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}')),
    ).toBe(true);
  });

  it.each([
    ['{"jsonrpc":', -32700, null],
    ['[{"jsonrpc":"2.0","id":1,"method":"a"}]', -32600, null],
    ['"text"', -32600, null],
    ['{"id":4,"method":"a"}', -32600, 4],
    ['{"jsonrpc":"2.0","id":5,"method":""}', -32600, 5],
    ['{"jsonrpc":"2.0","id":6,"method":"a","params":[1]}', -32600, 6],
    ['{"jsonrpc":"2.0","id":{},"method":"a"}', -32600, null],
    ['{"jsonrpc":"2.0","id":7}', -32600, 7],
    ['{"jsonrpc":"2.0","id":8,"result":1,"error":{"code":1,"message":"x"}}', -32600, 8],
    ['{"jsonrpc":"2.0","id":9,"error":"bad"}', -32600, 9],
  ])('refuses %s with %i', (body, code, id) => {
    const err = rejection(body);
    expect(err.error.code).toBe(code);
    expect(err.id).toBe(id);
  });

  it('says batching is not supported', () => {
    expect(rejection('[]').error.message).toMatch(/batch/);
  });
});

describe('annotations', () => {
  it('records method, id and target', () => {
    const cases: Array<[string, string | undefined]> = [
      ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fetch"}}', 'fetch'],
      ['{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p"}}', 'p'],
      ['{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}}', 'file:///a'],
      ['{"jsonrpc":"2.0","id":1,"method":"tools/list"}', undefined],
    ];
    for (const [body, target] of cases) {
      const message = parseJsonRpc(body);
      expect(messageTarget(message)).toBe(target);
      const annotations: ExchangeRecord = {};
      recordMessage(annotations, message);
      expect(annotations).toEqual({ method: JSON.parse(body).method, id: 1, ...(target ? { target } : {}) });
    }
  });
});

describe('strict envelope check', () => {
  it.each([
    ['a duplicate key', '{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"ping"}', /appears twice/],
    [
      'a case-variant key',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","Method":"ping"}',
      /"Method" appears twice/,
    ],
    [
      'a duplicate key spelled with an escape',
      '{"jsonrpc":"2.0","id":1,"method":"ping","\\u006dethod":"tools/call"}',
      /appears twice/,
    ],
    [
      'a case-variant key deep inside params',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":[{"k":1,"K":2}]}}}',
      /"K" appears twice/,
    ],
    [
      'nesting past the bound',
      `{"jsonrpc":"2.0","method":"x","params":{"a":${'['.repeat(1001)}${']'.repeat(1001)}}}`,
      /nested deeper/,
    ],
    ['a float id', '{"jsonrpc":"2.0","id":1.5,"method":"ping"}', /safe integer/],
    ['an id past 2^53', '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}', /safe integer/],
    [
      'params that are an array',
      '{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}',
      /params must be an object/,
    ],
    ['a batch', '[{"jsonrpc":"2.0","id":1,"method":"ping"}]', /batch/],
  ])('refuses %s', (_name, body, message) => {
    expect(rejection(body).error).toMatchObject({ code: -32600, message: expect.stringMatching(message) });
  });

  it('refuses trailing bytes after the message as a parse error', () => {
    expect(rejection('{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0"}').error.code).toBe(-32700);
    expect(rejection('{"jsonrpc":"2.0","id":1,"method":"ping"} x').error.code).toBe(-32700);
  });

  it('finds a repeated key in an object of any size, and forgets the keys of closed objects and earlier calls', () => {
    const keys = (n: number, from = 0) =>
      Array.from({ length: n }, (_, i) => `"k${from + i}":${i}`).join(',');
    const message = (args: string) =>
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{${args}}}}`;
    // Past the listed keys (a Set then), the repeat is the last key or the first one again.
    expect(rejection(message(`${keys(40)},"K39":1`)).error.message).toMatch(/"K39" appears twice/);
    expect(rejection(message(`${keys(40)},"k0":1`)).error.message).toMatch(/"k0" appears twice/);
    expect(rejection(message(`${keys(5)},"K3":1`)).error.message).toMatch(/"K3" appears twice/);
    // A nested object's keys are its own; its parent's continue after it closes.
    expect(parseJsonRpc(message(`${keys(20)},"o":{${keys(20)}},${keys(20, 20)}`))).toMatchObject({ id: 1 });
    expect(rejection(message(`"a":1,"o":{"b":1},"b":2,"A":3`)).error.message).toMatch(/"A" appears twice/);
    // A call that stopped early (a repeat deep inside) leaves nothing for the next one.
    expect(rejection(message(`"o":{"p":{${keys(30)},"k29":1}}`)).error.message).toMatch(/appears twice/);
    expect(parseJsonRpc(message(keys(30)))).toMatchObject({ id: 1 });
  });

  it('finds a repeated key after nested objects and arrays, at any depth, the parent small or large', () => {
    const keys = (n: number) => Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',');
    const nested = '[{"name":"a","s":{"t":"o"}},{"name":"b","s":{"t":[1,{}]}}]';
    const twice = [
      // A list answer's result whose second "tools" follows the first's contents.
      `{"jsonrpc":"2.0","id":1,"result":{"tools":${nested},"tools":[]}}`,
      `{"a":{"b":1},"a":2}`,
      `{"a":[[],{}],"A":2}`,
      `{"o":{"p":{"q":${nested},"r":{},"Q":1}}}`,
      `[1,{"x":{"y":[{"z":{}}]},"x":0}]`,
      // Past the listed keys: the parent's keys are a Set when the nested object opens.
      `{${keys(20)},"o":${nested},"k3":1}`,
      `{"o":{${keys(20)},"n":{${keys(20)}},"K19":1}}`,
    ];
    for (const text of twice) expect(jsonShapeProblem(text, true), text).toMatch(/appears twice/);
    // The same texts without the repeat pass: the nested objects' keys are their own.
    expect(jsonShapeProblem(`{"jsonrpc":"2.0","id":1,"result":{"tools":${nested},"next":[]}}`, true)).toBe(
      undefined,
    );
    expect(jsonShapeProblem(`{${keys(20)},"o":${nested},"k20":1}`, true)).toBe(undefined);
  });

  it('accepts a leading BOM, keys that only look alike, and the same key in different objects', () => {
    expect(parseJsonRpc('\ufeff{"jsonrpc":"2.0","id":1,"method":"ping"}')).toMatchObject({ id: 1 });
    const message = parseJsonRpc(
      '{"jsonrpc":"2.0","id":"a,b","method":"tools/call","params":{"name":"n","arguments":{"name":"x","a":{"name":"y"},"s":"\\"name\\":1,"}}}',
    );
    expect(message).toMatchObject({ params: { arguments: { name: 'x', a: { name: 'y' } } } });
  });
});
