/**
 * Gives memory back when a proxy process goes quiet after a busy period. Under load V8 commits
 * more heap pages than the live heap needs (the old generation grows, freed pages are pooled) and
 * keeps them: its own memory reducer waits for a drop in the allocation rate, which it measures
 * at GCs, and an idle process makes none, so it runs only after its watchdog (about 100 s after
 * the last GC, and later still while anything allocates a little).
 *
 * Every check interval: when the process has handled (almost) no I/O for `quietMs` (whole
 * intervals in a row), was busy since the last reduction (or has not reduced yet), and RSS is at
 * least `growthBytes` above the lowest it has ever been, one full memory-reducing GC runs: V8's
 * "last resort" collection, which compacts the heap, shrinks the young generation and releases
 * pooled pages. The wait is long because that GC is not free for what comes next: the first
 * burst after it costs about 40 % more CPU per request (docs/performance.md, "Back near idle
 * after the load"), and MCP traffic comes in bursts with pauses of seconds between them. Idleness is
 * counted in libuv's I/O events, not in event-loop utilization: a proxy under light load waits on
 * its peers most of the time and looks idle by utilization. Nothing runs per request: the check
 * is one timer. At most once per busy period (`idleMemoryDecision` has the rules).
 */
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { log } from './log.js';

export interface IdleMemoryOptions {
  /** How often the event loop's idleness and RSS are checked (default 10 s). */
  intervalMs?: number;
  /** How long the process must have been quiet before a reduction (default 30 s; whole intervals). */
  quietMs?: number;
  /** RSS above the lowest seen that makes a quiet period after a busy one reduce memory (default 8 MB). */
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

/** What the checks remember between intervals. */
export interface IdleMemoryState {
  /** The lowest RSS any check has seen: the process's idle size, which a reduction aims back at. */
  floor: number;
  /** Whether an interval since the last reduction (or the start) was busy. */
  busySinceReduction: boolean;
  /** Quiet intervals in a row up to now. */
  quietIntervals: number;
}

/** One interval's figures, and the thresholds they are judged by. */
export interface IdleCheck {
  /** libuv I/O events handled during the interval. */
  events: number;
  /** RSS at the end of the interval, in bytes. */
  rss: number;
  /** The most events an idle interval may have. */
  idleEvents: number;
  /** How far above the floor RSS must be for a reduction to be worth it. */
  growthBytes: number;
  /** How many quiet intervals in a row a reduction waits for. */
  quietIntervals: number;
}

/**
 * Whether this interval reduces memory, and the state after it (before the reduction's own
 * effect: the caller lowers the floor with the RSS measured after it). A reduction needs
 * `quietIntervals` quiet intervals in a row after a busy one, with RSS at least `growthBytes`
 * above the floor. The floor is the lowest RSS ever seen, not the RSS after the last reduction:
 * a reduction in a pause of a long load would otherwise raise the mark, and the heap the rest of
 * the load commits would stay when it ends with less than `growthBytes` on top. A busy interval
 * must come between two reductions, so an idle process never repeats one, however far above the
 * floor it stays.
 */
export function idleMemoryDecision(
  state: IdleMemoryState,
  check: IdleCheck,
): { reduce: boolean; state: IdleMemoryState } {
  const floor = Math.min(state.floor, check.rss);
  if (check.events > check.idleEvents) {
    return { reduce: false, state: { floor, busySinceReduction: true, quietIntervals: 0 } };
  }
  const quietIntervals = state.quietIntervals + 1;
  const reduce =
    state.busySinceReduction &&
    quietIntervals >= check.quietIntervals &&
    check.rss >= floor + check.growthBytes;
  return {
    reduce,
    state: { floor, busySinceReduction: state.busySinceReduction && !reduce, quietIntervals },
  };
}

/**
 * Starts the checks; the returned function stops them. The timer never keeps the process alive.
 * A Node without libuv's metrics (before 22.8) cannot tell idle from busy: nothing starts there.
 */
export function startIdleMemoryReducer(options: IdleMemoryOptions = {}): () => void {
  if (ioEvents() === undefined) return () => undefined;
  const intervalMs = options.intervalMs ?? 10_000;
  const growthBytes = options.growthBytes ?? 8 * 1024 * 1024;
  const idleEvents = ((options.idleEventsPerSecond ?? 5) * intervalMs) / 1000;
  const quietIntervals = Math.max(1, Math.ceil((options.quietMs ?? 30_000) / intervalMs));
  // Start-up counts as busy: what it left above the floor goes back after the first quiet period.
  let state: IdleMemoryState = {
    floor: process.memoryUsage.rss(),
    busySinceReduction: true,
    quietIntervals: 0,
  };
  let eventsBefore = ioEvents() ?? 0;
  const timer = setInterval(() => {
    const events = ioEvents() ?? 0;
    const rss = process.memoryUsage.rss();
    const decision = idleMemoryDecision(state, {
      events: events - eventsBefore,
      rss,
      idleEvents,
      growthBytes,
      quietIntervals,
    });
    eventsBefore = events;
    state = decision.state;
    if (!decision.reduce) return;
    memoryReducingGc()({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    const rssAfter = process.memoryUsage.rss();
    state = { ...state, floor: Math.min(state.floor, rssAfter) };
    log().debug({ rssBefore: rss, rssAfter }, 'idle after a busy period: heap memory given back');
    options.onReduce?.({ rssBefore: rss, rssAfter });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
