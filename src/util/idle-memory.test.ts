import { createServer, request, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { idleMemoryDecision, startIdleMemoryReducer, type IdleMemoryState } from './idle-memory.js';

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

describe('idleMemoryDecision', () => {
  const rules = { idleEvents: 50, growthBytes: 8 * MB, quietIntervals: 1 };
  /** Feeds intervals (events, RSS in MB) through the rules; RSS after a reduction is `afterMb`. */
  function run(intervals: Array<[events: number, rssMb: number]>, afterMb = 76, quietIntervals = 1) {
    let state: IdleMemoryState = { floor: 74 * MB, busySinceReduction: false, quietIntervals: 0 };
    const reductions: number[] = [];
    for (const [i, [events, rssMb]] of intervals.entries()) {
      const decision = idleMemoryDecision(state, { events, rss: rssMb * MB, ...rules, quietIntervals });
      state = decision.state;
      if (decision.reduce) {
        reductions.push(i);
        state = { ...state, floor: Math.min(state.floor, afterMb * MB) };
      }
    }
    return { reductions, state };
  }

  it('reduces at the first quiet interval after a busy one when RSS is well above the floor', () => {
    expect(
      run([
        [0, 74],
        [5000, 100],
        [3, 101],
        [0, 101],
      ]).reductions,
    ).toEqual([2]);
  });

  it('never reduces during traffic, however high RSS is', () => {
    expect(
      run([
        [5000, 100],
        [51, 110],
        [400, 120],
      ]).reductions,
    ).toEqual([]);
  });

  it('counts a health probe or two as quiet', () => {
    expect(
      run([
        [5000, 100],
        [50, 100],
      ]).reductions,
    ).toEqual([1]);
  });

  it('does not reduce when RSS stays within the growth margin of the floor', () => {
    expect(
      run([
        [5000, 81.9],
        [0, 81.9],
        [0, 81.9],
      ]).reductions,
    ).toEqual([]);
  });

  it('does not repeat a reduction while the process stays quiet, even far above the floor', () => {
    // The reduction left RSS at 90 MB (glibc's free memory stays): no GC every interval for it.
    expect(
      run(
        [
          [5000, 100],
          [0, 100],
          [0, 90],
          [0, 90],
          [0, 90],
        ],
        90,
      ).reductions,
    ).toEqual([1]);
  });

  it('reduces again after the next busy period', () => {
    expect(
      run([
        [5000, 100],
        [0, 100],
        [5000, 100],
        [0, 100],
      ]).reductions,
    ).toEqual([1, 3]);
  });

  it('measures growth from the lowest RSS ever seen, so a reduction in a pause of a long load does not raise the mark', () => {
    // A pause mid-load reduces to 95 MB; the load goes on to 101 MB (6 MB above that) and ends:
    // 101 MB is 27 MB above the idle floor, so the end of the load reduces too.
    const { reductions, state } = run(
      [
        [5000, 100],
        [0, 100],
        [5000, 101],
        [0, 101],
      ],
      95,
    );
    expect(reductions).toEqual([1, 3]);
    expect(state.floor).toBe(74 * MB);
  });

  it('waits for the whole quiet period: pauses shorter than it between bursts never reduce', () => {
    // Three quiet intervals needed: bursts with two quiet intervals between them keep their heap.
    const bursts = run(
      [
        [5000, 100],
        [0, 100],
        [0, 100],
        [5000, 101],
        [3, 101],
        [0, 101],
        [5000, 101],
      ],
      76,
      3,
    );
    expect(bursts.reductions).toEqual([]);
    expect(bursts.state.quietIntervals).toBe(0);
    // The third quiet interval in a row reduces; a probe (few events) counts as quiet.
    expect(
      run(
        [
          [5000, 100],
          [0, 100],
          [10, 100],
          [0, 100],
          [0, 100],
        ],
        76,
        3,
      ).reductions,
    ).toEqual([3]);
  });

  it('lowers the floor to the lowest RSS a check sees', () => {
    expect(
      run([
        [0, 70],
        [5000, 77],
        [0, 77],
      ]).reductions,
    ).toEqual([]);
    expect(
      run([
        [0, 70],
        [5000, 78],
        [0, 78],
      ]).reductions,
    ).toEqual([2]);
  });
});

describe('startIdleMemoryReducer', () => {
  it('gives heap memory back once the process is idle after growing, and not again while it stays idle', async () => {
    const reductions: Array<{ rssBefore: number; rssAfter: number }> = [];
    const stop = startIdleMemoryReducer({
      intervalMs: 100,
      quietMs: 300,
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
      // Idle for many more intervals: no busy one came between, so nothing more runs.
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
      quietMs: 300,
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
