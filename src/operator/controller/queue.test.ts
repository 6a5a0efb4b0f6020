import { describe, expect, it } from 'vitest';
import { WorkQueue, type Handler } from './queue.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function until(check: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(2);
  }
}

function recorder(
  impl: (key: string, n: number) => Promise<void | { requeueAfter?: number }> = () => Promise.resolve(),
) {
  const calls: string[] = [];
  const handle: Handler = (key) => {
    calls.push(key);
    return impl(key, calls.filter((k) => k === key).length);
  };
  return { calls, handle };
}

describe('WorkQueue', () => {
  it('processes a key added several times while waiting once', async () => {
    const { calls, handle } = recorder();
    const q = new WorkQueue({ handle });
    q.add('ns/a');
    q.add('ns/a');
    q.add('ns/b');
    q.add('ns/a');
    expect(q.depth).toBe(2);
    q.start();
    await until(() => calls.length === 2);
    await sleep(20);
    expect(calls.sort()).toEqual(['ns/a', 'ns/b']);
    await q.shutdown(100);
  });

  it('processes a key re-added while running again afterwards, never on two workers', async () => {
    let active = 0;
    let maxActive = 0;
    const { calls, handle } = recorder(async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      await sleep(30);
      active--;
    });
    const q = new WorkQueue({ handle, workers: 4 });
    q.start();
    q.add('k');
    await until(() => calls.length === 1);
    q.add('k');
    q.add('k');
    await until(() => calls.length === 2);
    await sleep(60);
    expect(calls).toEqual(['k', 'k']);
    expect(maxActive).toBe(1);
    await q.shutdown(200);
  });

  it('runs up to the configured number of workers in parallel', async () => {
    let active = 0;
    let maxActive = 0;
    const { handle } = recorder(async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      await sleep(20);
      active--;
    });
    const q = new WorkQueue({ handle, workers: 3 });
    for (const k of ['a', 'b', 'c', 'd', 'e', 'f']) q.add(k);
    q.start();
    await until(() => active === 0 && q.depth === 0);
    await sleep(30);
    expect(maxActive).toBe(3);
    await q.shutdown(200);
  });

  it('backs off exponentially per key on failure and resets on success', async () => {
    const failures: number[] = [];
    const { calls, handle } = recorder((_key, n) =>
      n <= 3 ? Promise.reject(new Error(`fail ${n}`)) : Promise.resolve(),
    );
    const q = new WorkQueue({
      handle,
      baseDelayMs: 10,
      maxDelayMs: 25,
      onFailure: (_k, _e, delay) => failures.push(delay),
    });
    q.start();
    q.add('x');
    await until(() => calls.length === 4);
    expect(failures).toEqual([10, 20, 25]);
    expect(q.retries).toBe(3);
    expect(q.backoffFor('x')).toBe(10);
    await q.shutdown(100);
  });

  it('requeues after the delay a handler asks for', async () => {
    const times: number[] = [];
    const { handle } = recorder((_k, n) => {
      times.push(Date.now());
      return Promise.resolve(n === 1 ? { requeueAfter: 80 } : undefined);
    });
    const q = new WorkQueue({ handle });
    q.start();
    q.add('r');
    await until(() => times.length === 2);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(75);
    await q.shutdown(100);
  });

  it('keeps the earliest of several delayed adds', async () => {
    const { calls, handle } = recorder();
    const q = new WorkQueue({ handle });
    q.start();
    q.addAfter('d', 500);
    q.addAfter('d', 20);
    q.addAfter('d', 300);
    await until(() => calls.length === 1, 200);
    await q.shutdown(100);
    expect(calls).toEqual(['d']);
  });

  it('takes no keys before start and while paused', async () => {
    const { calls, handle } = recorder();
    const q = new WorkQueue({ handle });
    q.add('p');
    await sleep(20);
    expect(calls).toEqual([]);
    q.start();
    await until(() => calls.length === 1);
    expect(await q.pause(100)).toBe(true);
    q.add('p');
    await sleep(20);
    expect(calls).toEqual(['p']);
    q.start();
    await until(() => calls.length === 2);
    await q.shutdown(100);
  });

  it('shutdown stops taking keys, waits for running ones, and is bounded', async () => {
    const { calls, handle } = recorder((key) => sleep(key === 'slow' ? 1_000 : 30));
    const q = new WorkQueue({ handle, workers: 1 });
    q.start();
    q.add('quick');
    q.add('later');
    await until(() => calls.length === 1);
    expect(await q.shutdown(500)).toBe(true);
    expect(calls).toEqual(['quick']);
    q.add('after');
    await sleep(20);
    expect(calls).toEqual(['quick']);

    const q2 = new WorkQueue({ handle, workers: 1 });
    q2.start();
    q2.add('slow');
    await until(() => calls.includes('slow'));
    const started = Date.now();
    expect(await q2.shutdown(50)).toBe(false);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('rejects a worker count that is not a positive whole number', () => {
    expect(() => new WorkQueue({ handle: () => Promise.resolve(), workers: 0 })).toThrow(/workers must be/);
  });
});
