/**
 * Multi round-trip requests across two proxy processes sharing one real Redis, in front of the
 * v1 conformance fixture over HTTP: the backend's request stays open in the process that took
 * the first request, and a retry landing on the other replica is handed to it (Redis pub/sub)
 * and answered with the next round or the final result. States are sealed with the workload's
 * one shared key and consumed once across both replicas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpFixture, type HttpFixture } from '../../fixtures/conformance/spawn.js';
import { accept, sendModern } from '../../support/mrtr-client.js';
import {
  startRedisReplicas,
  stopProxyProcess,
  type ProxyProcess,
  type RedisReplicas,
} from '../../support/proxy-processes.js';

const TOOL = 'test_input_required_result_multi_round';

describe('MRTR across two proxy processes sharing Redis', () => {
  let fixture: HttpFixture;
  let replicas: RedisReplicas;
  let a: ProxyProcess;
  let b: ProxyProcess;
  beforeAll(async () => {
    fixture = await httpFixture();
    replicas = await startRedisReplicas(fixture.url);
    ({ a, b } = replicas);
  }, 60_000);
  afterAll(async () => {
    await replicas?.stop();
    await fixture?.stop();
  });

  const call = (replica: ProxyProcess, params: Record<string, unknown>) =>
    sendModern(`${replica.url}/mcp`, 'tools/call', { name: TOOL, arguments: {}, ...params });

  it('round 1 on A, round 2 on B, the result on A: each retry reaches the backend request A holds', async () => {
    expect(a.url).not.toBe(b.url);
    const r1 = (await call(a, {})).answer.result!;
    expect(r1.resultType).toBe('input_required');
    const [k1] = Object.keys(r1.inputRequests!);

    const second = await call(b, {
      inputResponses: { [k1 as string]: accept({ name: 'Ann' }) },
      requestState: r1.requestState,
    });
    const r2 = second.answer.result!;
    expect(second.status).toBe(200);
    expect(r2.resultType).toBe('input_required');
    expect(Object.values(r2.inputRequests!)[0]?.params.message).toBe('Step 2: What is your favorite color?');
    const [k2] = Object.keys(r2.inputRequests!);

    const last = await call(a, {
      inputResponses: { [k2 as string]: accept({ color: 'red' }) },
      requestState: r2.requestState,
    });
    expect(last.answer.result?.content).toEqual([{ type: 'text', text: 'Ann likes red' }]);
  });

  it('a state used on one replica is refused on the other (single use through Redis)', async () => {
    const r1 = (await call(b, {})).answer.result!;
    const [key] = Object.keys(r1.inputRequests!);
    const retry = {
      inputResponses: { [key as string]: accept({ name: 'Cy' }) },
      requestState: r1.requestState,
    };
    const used = await call(a, retry);
    expect(used.answer.result?.resultType).toBe('input_required');
    const replay = await call(b, retry);
    expect([replay.status, replay.answer.error?.code, replay.answer.error?.data?.reason]).toEqual([
      400,
      -32602,
      'replayed',
    ]);
  });

  it('a state whose holder is gone is refused as no longer in progress', async () => {
    const r1 = (await call(a, {})).answer.result!;
    const [key] = Object.keys(r1.inputRequests!);
    await stopProxyProcess(a);
    const orphan = await call(b, {
      inputResponses: { [key as string]: accept({ name: 'Di' }) },
      requestState: r1.requestState,
    });
    expect([orphan.status, orphan.answer.error?.data?.reason]).toEqual([400, 'gone']);
    expect(orphan.answer.error?.message).toMatch(/no longer in progress/);
  });
});
