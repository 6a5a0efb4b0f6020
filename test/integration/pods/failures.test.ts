/**
 * The failure cases of spec §7 with the operator's pods played by `podman kube play` (Secrets
 * resolved into the pods; test/support/pods.ts): two replicas without Redis lose the session on
 * the other pod; a wrong Redis CA keeps the pod from ever being ready and it never speaks
 * plaintext to Redis; a
 * missing CA Secret leaves the pod unstarted and the operator's status says why.
 */
import { readFileSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../support/kube-controller.js';
import {
  applyObjects,
  proxyStatus,
  remoteProxy,
  secret,
  waitForAppliedObjects,
} from '../../support/pods-cluster.js';
import { addCall, initializeSession, usePodTestEnvironment } from '../../support/pods-fixture.js';
import {
  healthStatus,
  PodNotStartedError,
  playProxyPods,
  readOperatorOutput,
  waitForHealth,
  type ProxyPod,
} from '../../support/pods.js';
import { podmanCli } from '../../support/podman.js';
import { freePort } from '../../support/ports.js';
import { messagesOf, post } from '../../support/proxy-harness.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { testTempDir } from '../../support/temp-dir.js';

const workDir = testTempDir('moat-pods-failures-');
/** How long an unready pod is watched: long enough for several Redis connection attempts. */
const UNREADY_WATCH_MS = 8_000;

const env = usePodTestEnvironment('pods-failures', workDir);

/** A loopback TCP relay to `target` that records the first bytes each client sends. */
async function recordingRelay(target: number): Promise<{ port: number; firstBytes: Buffer[] }> {
  const firstBytes: Buffer[] = [];
  const server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: target });
    client.once('data', (chunk: Buffer) => firstBytes.push(chunk.subarray(0, 8)));
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.once('error', close);
    upstream.once('error', close);
    client.once('close', close);
    upstream.once('close', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  env.onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as AddressInfo).port, firstBytes };
}

describe('proxy pods in the failure cases of spec §7 (Secrets resolved into the pods)', () => {
  it('without Redis, a request reaching the other replica gets Session not found', async () => {
    await applyObjects(env.namespace, [
      remoteProxy('no-redis', env.proxySpec({ replicas: 2, sessionAffinity: 'None' })),
    ]);
    const status = await waitForAppliedObjects(env.namespace, 'no-redis');
    expect(status.conditions?.find((c) => c.type === 'SessionStorageWarning')?.status).toBe('True');
    const played = await env.play('no-redis', 2);
    await Promise.all(played.pods.map((pod) => waitForHealth(pod)));
    const [a, b] = played.pods as [ProxyPod, ProxyPod];
    const headers = await initializeSession(`${a.url}/mcp`);
    const call = addCall(2, 1, 2);
    const onB = await post(`${b.url}/mcp`, call, headers);
    expect(onB.status).toBe(404);
    expect(onB.json).toMatchObject({ error: { code: -32001, message: 'Session not found' } });
    // The session itself is fine on the pod that made it.
    const onA = await post(`${a.url}/mcp`, call, headers);
    expect(onA.status).toBe(200);
    expect(messagesOf(onA)[0]).toMatchObject({ id: 2, result: { content: [{ type: 'text', text: '3' }] } });
  }, 180_000);

  it('answers /health with 503 (not ready) once its Redis is gone', async () => {
    const redis: RedisServer = await startRedis();
    let redisRunning = true;
    env.onCleanup(() => (redisRunning ? redis.stop() : Promise.resolve()));
    await applyObjects(env.namespace, [
      remoteProxy(
        'redis-gone',
        env.proxySpec({ sessionStorage: { provider: 'redis', address: redis.address } }),
      ),
    ]);
    await waitForAppliedObjects(env.namespace, 'redis-gone');
    const [pod] = (await env.play('redis-gone')).pods as [ProxyPod];
    await waitForHealth(pod);
    await redis.stop();
    redisRunning = false;
    await eventually(async () => expect(await healthStatus(pod)).toBe(503), 30_000, 250);
  }, 180_000);

  it('with a wrong Redis CA, the pod never becomes ready and never sends Redis plaintext', async () => {
    const redis: RedisServer = await startRedis({ tls: true });
    env.onCleanup(() => redis.stop());
    const relay = await recordingRelay(redis.port);
    await applyObjects(env.namespace, [
      secret('wrong-ca', { 'ca.crt': readFileSync(redis.tls!.otherCaFile, 'utf8') }),
      remoteProxy(
        'wrong-ca',
        env.proxySpec({
          sessionStorage: {
            provider: 'redis',
            address: `127.0.0.1:${relay.port}`,
            tls: { caCertSecretRef: { name: 'wrong-ca', key: 'ca.crt' } },
          },
        }),
      ),
    ]);
    await waitForAppliedObjects(env.namespace, 'wrong-ca');
    const [pod] = (await env.play('wrong-ca', 1)).pods as [ProxyPod];
    const seen = new Set<number>();
    const deadline = Date.now() + UNREADY_WATCH_MS;
    while (Date.now() < deadline) {
      seen.add(await healthStatus(pod));
      await new Promise((r) => setTimeout(r, 250));
    }
    const logs = await pod.logs();
    // `moat proxy` refuses to serve without its session store: the container exits (and is
    // restarted, as a kubelet would) and its /health never answers 200, so the pod is never Ready.
    expect([...seen], logs).not.toContain(200);
    expect(logs).toContain(
      `cannot connect to the Redis session store at 127.0.0.1:${relay.port} (TLS): self-signed certificate in certificate chain`,
    );
    // It tried Redis, every time starting with a TLS handshake record (0x16), never a RESP command.
    expect(relay.firstBytes.length, logs).toBeGreaterThan(0);
    for (const bytes of relay.firstBytes) expect(bytes[0], logs).toBe(0x16);
  }, 180_000);

  it('with the CA Secret missing, the pod does not start and the status says why', async () => {
    const redis: RedisServer = await startRedis({ tls: true });
    env.onCleanup(() => redis.stop());
    await applyObjects(env.namespace, [
      remoteProxy(
        'absent-ca',
        env.proxySpec({
          sessionStorage: {
            provider: 'redis',
            address: redis.address,
            tls: { caCertSecretRef: { name: 'absent-redis-ca', key: 'ca.crt' } },
          },
        }),
      ),
    ]);
    const status = await waitForAppliedObjects(env.namespace, 'absent-ca');
    const condition = status.conditions?.find((c) => c.type === 'RedisCASecretFound');
    expect(condition).toMatchObject({ status: 'False', reason: 'SecretNotFound' });
    expect(condition?.message).toContain('absent-redis-ca');
    expect(status.phase).toBe('Pending');
    const output = await readOperatorOutput(env.namespace, 'absent-ca');
    const error = await playProxyPods(output, { ports: [await freePort()], workDir }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(PodNotStartedError);
    expect((error as Error).message).toBe('Secret absent-redis-ca does not exist, so the pod cannot start');
    const pods = await podmanCli([
      'pod',
      'ps',
      '--filter',
      `name=${env.namespace}-mcp-absent-ca`,
      '--format',
      '{{.Name}}',
    ]);
    expect(pods.trim()).toBe('');

    // Creating the Secret clears the condition: the operator watches it.
    await applyObjects(env.namespace, [
      secret('absent-redis-ca', { 'ca.crt': readFileSync(redis.tls!.caFile, 'utf8') }),
    ]);
    await eventually(async () => {
      const now = await proxyStatus(env.namespace, 'absent-ca');
      expect(now.conditions?.find((c) => c.type === 'RedisCASecretFound')?.status).toBe('True');
    }, 30_000);
  }, 180_000);
});
