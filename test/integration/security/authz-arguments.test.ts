/**
 * Issue 31, finding 2, end to end: a Cedar `forbid` on an argument is not stepped around with a
 * value Cedar cannot hold (a fraction, 1e21, a string, a reserved key). Real proxy, real Cedar
 * engine, a real v1 SDK server behind it, real fetch() as the client; the backend's request log
 * shows whether the call reached it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../../src/proxy/index.js';
import { startV1StatelessBackend, type HttpBackendServer } from '../../support/mcp-http-backends.js';
import { memoryLogger, post, testConfig } from '../../support/proxy-harness.js';

const AUTHZ = {
  version: '1.0',
  type: 'cedarv1',
  cedar: {
    policies: [
      'permit(principal, action, resource);',
      'forbid(principal, action == Action::"call_tool", resource == Tool::"echo") when { context.arg_amount > 1000 };',
      'forbid(principal, action == Action::"call_tool", resource == Tool::"echo") when { context has arg_to && context.arg_to.to == "evil" };',
    ],
  },
};

let backend: HttpBackendServer;
const proxies: RunningProxy[] = [];

async function proxyWith(mapping?: 'strict' | 'lossy'): Promise<RunningProxy> {
  const proxy = await startProxy(
    testConfig({ authz_config: AUTHZ, ...(mapping ? { authz_argument_mapping: mapping } : {}) }),
    { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
    { logger: memoryLogger().logger },
  );
  proxies.push(proxy);
  return proxy;
}

beforeAll(async () => {
  backend = await startV1StatelessBackend();
});
afterAll(async () => {
  for (const proxy of proxies) await proxy.close();
  await backend.close();
});

let nextId = 1;

/** A tools/call of echo with `args` as raw JSON text (so 1e21 and 5000.5 go out as written). */
async function callEcho(proxy: RunningProxy, argsJson: string) {
  const before = backend.seen.length;
  const id = nextId++;
  const res = await post(
    `${proxy.url}/mcp`,
    `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":${argsJson}}}`,
    { 'mcp-protocol-version': '2025-11-25' },
  );
  const error = (res.json as { error?: { code: number; message: string; data?: { argument?: string } } })
    ?.error;
  return { status: res.status, error, reachedBackend: backend.seen.length > before };
}

describe('a forbid on an argument, strict mapping (the default)', () => {
  let proxy: RunningProxy;
  beforeAll(async () => {
    proxy = await proxyWith();
  });

  // Before the fix: 5000.5, 1e21 and the reserved key were answered 200 and ran on the backend.
  it.each([
    ['5000', '{"text":"x","amount":5000}', undefined],
    ['5000.5', '{"text":"x","amount":5000.5}', 'amount'],
    ['1e21', '{"text":"x","amount":1e21}', 'amount'],
    ['"5000" (a string)', '{"text":"x","amount":"5000"}', 'amount'],
    ['{"to":"evil","__extn":1}', '{"text":"x","amount":1,"to":{"to":"evil","__extn":1}}', 'to'],
  ])('refuses amount %s with 403 naming the argument, before the backend', async (_name, args, argument) => {
    const answer = await callEcho(proxy, args);
    expect(answer.status).toBe(403);
    expect(answer.error?.code).toBe(403);
    expect(answer.reachedBackend).toBe(false);
    if (argument !== undefined) {
      expect(answer.error?.data?.argument).toBe(argument);
      expect(answer.error?.message).toContain(`argument "${argument}"`);
    }
  });

  it('lets a call no forbid matches through to the backend', async () => {
    const answer = await callEcho(proxy, '{"text":"x","amount":5,"to":{"to":"bob"},"unread":1e21}');
    expect(answer).toMatchObject({ status: 200, error: undefined, reachedBackend: true });
  });
});

describe('the lossy mapping (opted into)', () => {
  it('leaves out what Cedar cannot hold: the guarded forbid no longer sees the reserved-key object', async () => {
    const proxy = await proxyWith('lossy');
    const smuggled = await callEcho(proxy, '{"text":"x","amount":1,"to":{"to":"evil","__extn":1}}');
    expect(smuggled).toMatchObject({ status: 200, reachedBackend: true });
    // Still refused: a forbid that cannot be evaluated (here a decimal compared with >) fails closed.
    expect(await callEcho(proxy, '{"text":"x","amount":5000.5}')).toMatchObject({
      status: 403,
      reachedBackend: false,
    });
  });
});
