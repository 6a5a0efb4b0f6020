import { createServer, request, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startIdleMemoryReducer } from './idle-memory.js';

const MB = 1024 * 1024;

/** Commits heap pages the way a load does: many short-lived objects, some kept for a while. */
function churn(): void {
  let kept: unknown[] = [];
  for (let round = 0; round < 40; round++) {
    const batch: unknown[] = [];
    for (let i = 0; i < 20_000; i++) batch.push({ round, i, text: `item ${round}-${i}` });
    kept = kept.concat(batch.slice(0, 5000));
  }
  if (kept.length === 0) throw new Error('unreachable');
}

function nextReduction(reductions: Array<{ rssBefore: number; rssAfter: number }>, bound: number) {
  return new Promise<void>((resolve, reject) => {
    const started = Date.now();
    const poll = setInterval(() => {
      if (reductions.length > 0) resolve();
      else if (Date.now() - started > bound) reject(new Error('no reduction within the bound'));
      else return;
      clearInterval(poll);
    }, 20);
  });
}

describe('startIdleMemoryReducer', () => {
  it('gives heap memory back once the process is idle after growing, and not again without new growth', async () => {
    const reductions: Array<{ rssBefore: number; rssAfter: number }> = [];
    const stop = startIdleMemoryReducer({
      intervalMs: 100,
      growthBytes: 16 * MB,
      onReduce: (r) => reductions.push(r),
    });
    try {
      churn();
      await nextReduction(reductions, 30_000);
      const [first] = reductions;
      expect(first!.rssAfter).toBeLessThan(first!.rssBefore);
      // V8's gc() was used without putting a gc() on the global object.
      expect(typeof (globalThis as { gc?: unknown }).gc).toBe('undefined');
      // Idle for many more intervals: RSS did not grow again, so nothing more runs.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(reductions).toHaveLength(1);
    } finally {
      stop();
    }
  });

  it('waits while requests keep coming, however little CPU they take, and reduces once they stop', async () => {
    const server = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true });
    const reductions: Array<{ rssBefore: number; rssAfter: number }> = [];
    let traffic = true;
    const oneRequest = () =>
      new Promise<void>((resolve, reject) => {
        request({ port, host: '127.0.0.1', agent }, (res) => res.resume().on('end', resolve))
          .on('error', reject)
          .end();
      });
    // One request at a time with pauses: the event loop is mostly idle, but I/O never stops.
    const client = (async () => {
      while (traffic) {
        await oneRequest();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    churn();
    const stop = startIdleMemoryReducer({
      intervalMs: 100,
      growthBytes: 1,
      onReduce: (r) => reductions.push(r),
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(reductions).toEqual([]);
      traffic = false;
      await client;
      await nextReduction(reductions, 30_000);
      expect(reductions.length).toBeGreaterThan(0);
    } finally {
      stop();
      agent.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('does nothing while RSS stays near its low mark', async () => {
    const reductions: unknown[] = [];
    const stop = startIdleMemoryReducer({
      intervalMs: 50,
      growthBytes: 512 * MB,
      onReduce: (r) => reductions.push(r),
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    stop();
    expect(reductions).toEqual([]);
  });
});
