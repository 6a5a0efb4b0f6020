/**
 * Gives memory back when a proxy process goes quiet after a busy period. Under load V8 commits
 * more heap pages than the live heap needs (the old generation grows, freed pages are pooled) and
 * keeps them: its own memory reducer waits for a drop in the allocation rate, which it measures
 * at GCs, and an idle process makes none, so it runs only after its watchdog (about 100 s after
 * the last GC, and later still while anything allocates a little).
 *
 * Every check interval, when the process handled (almost) no I/O during the whole interval and RSS
 * is at least `growthBytes` above the lowest it has been since the last reduction (or the start),
 * one full memory-reducing GC runs: V8's "last resort" collection, which compacts the heap,
 * shrinks the young generation and releases pooled pages. Idleness is counted in libuv's I/O
 * events, not in event-loop utilization: a proxy under light load waits on its peers most of the
 * time and looks idle by utilization. Nothing runs per request: the check is one timer. At most
 * once per busy period, since RSS must grow again before the next one.
 */
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { log } from './log.js';

export interface IdleMemoryOptions {
  /** How often the event loop's idleness and RSS are checked (default 10 s). */
  intervalMs?: number;
  /** RSS growth above the low mark that makes an idle interval reduce memory (default 8 MB). */
  growthBytes?: number;
  /** An interval counts as idle with at most this many I/O events per second (default 5: a health probe or two). */
  idleEventsPerSecond?: number;
  /** Told about each reduction (RSS before and after, in bytes). */
  onReduce?: (reduction: { rssBefore: number; rssAfter: number }) => void;
}

type GcFunction = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

let lastResortGc: GcFunction | undefined;

/**
 * V8's gc() (the same function --expose-gc puts on the global object) without a global gc() in
 * this process: the flag is on only while one new context is made, and the function is taken
 * from that context.
 */
function memoryReducingGc(): GcFunction {
  const exposed = (globalThis as { gc?: GcFunction }).gc;
  if (exposed) return exposed;
  if (!lastResortGc) {
    v8.setFlagsFromString('--expose-gc');
    try {
      lastResortGc = vm.runInNewContext('gc') as GcFunction;
    } finally {
      v8.setFlagsFromString('--no-expose-gc');
    }
  }
  return lastResortGc;
}

/** libuv's count of I/O events handled so far (Node 22.8 and later). */
function ioEvents(): number | undefined {
  return (performance.nodeTiming as { uvMetricsInfo?: { events: number } }).uvMetricsInfo?.events;
}

/**
 * Starts the checks; the returned function stops them. The timer never keeps the process alive.
 * A Node without libuv's metrics (before 22.8) cannot tell idle from busy: nothing starts there.
 */
export function startIdleMemoryReducer(options: IdleMemoryOptions = {}): () => void {
  if (ioEvents() === undefined) return () => undefined;
  const intervalMs = options.intervalMs ?? 10_000;
  const growth = options.growthBytes ?? 8 * 1024 * 1024;
  const idleEvents = ((options.idleEventsPerSecond ?? 5) * intervalMs) / 1000;
  let low = process.memoryUsage.rss();
  let eventsBefore = ioEvents() ?? 0;
  const timer = setInterval(() => {
    const events = ioEvents() ?? 0;
    const idle = events - eventsBefore <= idleEvents;
    eventsBefore = events;
    const rss = process.memoryUsage.rss();
    if (!idle || rss < low + growth) {
      low = Math.min(low, rss);
      return;
    }
    memoryReducingGc()({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    low = process.memoryUsage.rss();
    log().debug({ rssBefore: rss, rssAfter: low }, 'idle after a busy period: heap memory given back');
    options.onReduce?.({ rssBefore: rss, rssAfter: low });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
