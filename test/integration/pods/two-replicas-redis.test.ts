/**
 * Two replicas of the operator's proxy pod on one Redis, `sessionAffinity: None` (spec §4.3 rules
 * 3–6), played with `podman kube play` from what the operator wrote (Secrets resolved into the
 * pods; test/support/pods.ts). Sessions initialized through pod A are used through both pods;
 * pod A is removed in the middle and the calls go on through pod B: no session is lost and no
 * call after the initialize fails. Once with a password over plaintext, once over TLS with the
 * CA from `caCertSecretRef`.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/operator/controller/resource.js';
import {
  applyObjects,
  docExample,
  remoteProxy,
  secret,
  waitForAppliedObjects,
} from '../../support/pods-cluster.js';
import {
  addCall,
  initializeSession,
  sessionHeaders,
  usePodTestEnvironment,
} from '../../support/pods-fixture.js';
import { healthStatus, waitForHealth, type PlayedProxy, type ProxyPod } from '../../support/pods.js';
import { messagesOf, post } from '../../support/proxy-harness.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { testTempDir } from '../../support/temp-dir.js';

const SESSIONS = 4;
const CALLS_PER_SESSION = 60;
/** Pod A is removed after this many calls; the rest go through pod B. */
const REMOVE_A_AFTER = 100;

const env = usePodTestEnvironment('pods-redis', testTempDir('moat-pods-redis-'));

/** Applies `objects` (with the two-replica proxy `name`) and plays the operator's output as two pods. */
async function twoReplicas(name: string, objects: KubeObject[]): Promise<PlayedProxy> {
  await applyObjects(env.namespace, objects);
  const status = await waitForAppliedObjects(env.namespace, name);
  // Two replicas on Redis without affinity is the supported set-up: no warning.
  expect(status.conditions?.find((c) => c.type === 'SessionStorageWarning')?.status).toBe('False');
  const played = await env.play(name, 2);
  await Promise.all(played.pods.map((pod) => waitForHealth(pod)));
  return played;
}

/**
 * The two-replica recipe of docs/operator.md as written, with what only this test can know filled
 * in: the Secret values, the Redis address and the remote (through the pod's host alias).
 */
function recipeFor(redis: RedisServer): KubeObject[] {
  const objects = docExample('two-replicas-redis');
  const values: Record<string, Record<string, string>> = {
    'mcp-sessions-redis': { password: redis.password ?? '' },
    'mcp-sessions-redis-ca': { 'ca.crt': readFileSync(redis.tls!.caFile, 'utf8') },
  };
  return objects.map((obj) => {
    if (obj.kind === 'Secret') {
      const stringData = values[obj.metadata?.name ?? ''];
      if (!stringData) throw new Error(`the recipe has an unexpected Secret ${obj.metadata?.name ?? ''}`);
      return { ...obj, stringData };
    }
    const { remoteUrl: _documented, ...spec } = obj.spec as {
      remoteUrl: string;
      sessionStorage: Record<string, unknown>;
    };
    return {
      ...obj,
      spec: env.proxySpec({ ...spec, sessionStorage: { ...spec.sessionStorage, address: redis.address } }),
    };
  });
}

interface Tally {
  calls: number;
  failed: number;
  lostSessions: number;
  byPod: Record<string, number>;
}

/** Initializes `SESSIONS` sessions through A, then calls round-robin over both pods, removing A midway. */
async function runContinuity(a: ProxyPod, b: ProxyPod): Promise<Tally> {
  const sessions: string[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const headers = await initializeSession(`${a.url}/mcp`);
    // The initialized notification already goes through the other pod.
    const initialized = await post(
      `${b.url}/mcp`,
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      headers,
    );
    expect(initialized.status, initialized.text).toBe(202);
    sessions.push(headers['mcp-session-id']!);
  }
  const tally: Tally = { calls: 0, failed: 0, lostSessions: 0, byPod: { [a.name]: 0, [b.name]: 0 } };
  const lost = new Set<string>();
  let aRemoved = false;
  for (let n = 0; n < SESSIONS * CALLS_PER_SESSION; n++) {
    if (n === REMOVE_A_AFTER) {
      await a.remove();
      expect(await healthStatus(a), 'pod A still answers after its removal').toBe(0);
      aRemoved = true;
    }
    const pod = !aRemoved && n % 2 === 0 ? a : b;
    const session = sessions[n % SESSIONS]!;
    const call = addCall(n + 2, n, 1);
    const answer = await post(`${pod.url}/mcp`, call, sessionHeaders(session));
    tally.calls += 1;
    tally.byPod[pod.name] = (tally.byPod[pod.name] ?? 0) + 1;
    const message = answer.status === 200 ? messagesOf(answer)[0] : undefined;
    const ok =
      (message as { result?: { content?: { text?: string }[] } } | undefined)?.result?.content?.[0]?.text ===
      String(n + 1);
    if (!ok) tally.failed += 1;
    if (answer.status === 404) lost.add(session);
  }
  tally.lostSessions = lost.size;
  return tally;
}

function expectNoLoss(tally: Tally, a: ProxyPod, b: ProxyPod, label: string): void {
  console.log(`pods/${label}: ${JSON.stringify(tally)}`);
  expect(tally.calls).toBeGreaterThanOrEqual(200);
  expect(tally.byPod[a.name]).toBe(REMOVE_A_AFTER / 2);
  expect(tally.byPod[b.name]).toBe(tally.calls - REMOVE_A_AFTER / 2);
  expect(tally.lostSessions).toBe(0);
  expect(tally.failed).toBe(0);
}

describe('two proxy pods on Redis, no affinity (Secrets resolved into the pods)', () => {
  it('keeps every session through the loss of pod A (Redis with a password)', async () => {
    const redis: RedisServer = await startRedis({ password: 'redis-pass-for-pods' });
    env.onCleanup(() => redis.stop());
    const played = await twoReplicas('redis-plain', [
      secret('redis-auth', { password: 'redis-pass-for-pods' }),
      remoteProxy(
        'redis-plain',
        env.proxySpec({
          replicas: 2,
          sessionAffinity: 'None',
          sessionStorage: {
            provider: 'redis',
            address: redis.address,
            passwordRef: { name: 'redis-auth', key: 'password' },
          },
        }),
      ),
    ]);
    const [a, b] = played.pods as [ProxyPod, ProxyPod];
    expectNoLoss(await runContinuity(a, b), a, b, 'redis-plain');
  }, 240_000);

  it('keeps every session through the loss of pod A (the docs recipe: Redis over TLS, CA from caCertSecretRef, password)', async () => {
    const redis: RedisServer = await startRedis({ tls: true, password: 'redis-pass-for-pods' });
    env.onCleanup(() => redis.stop());
    const played = await twoReplicas('shared-sessions', recipeFor(redis));
    const [a, b] = played.pods as [ProxyPod, ProxyPod];
    expectNoLoss(await runContinuity(a, b), a, b, 'redis-tls');
  }, 240_000);
});
