/**
 * The proxy's thread's link to the telemetry worker (worker.ts): exchanges are gathered into
 * batches (batch.ts) posted every BATCH_SIZE exchanges or FLUSH_MS, never one message per request;
 * `/metrics` asks the worker for the Prometheus text, and close flushes and stops the worker.
 * Every wait is bounded; the worker never keeps the process alive.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { runtimeError, usageError } from '../util/errors.js';
import type { ExchangeFacts } from './attributes.js';
import { BatchBuilder, type ExchangeBatch, type SpanPlacement } from './batch.js';
import type { TelemetrySettings } from './settings.js';

export interface WorkerInit {
  settings: TelemetrySettings;
  metricExportIntervalMs?: number;
}

export type ToWorker =
  { type: 'batch'; batch: ExchangeBatch } | { type: 'scrape'; id: number } | { type: 'close' };

export type FromWorker =
  | { type: 'ready' }
  | { type: 'failed'; message: string; usage: boolean }
  | { type: 'scraped'; id: number; text?: string; error?: string }
  | { type: 'closed'; warning?: string };

const BATCH_SIZE = 256;
const FLUSH_MS = 100;
const START_TIMEOUT_MS = 30_000;
const SCRAPE_TIMEOUT_MS = 5_000;
/** Longer than the OTLP exporters' own 10 s timeout, so a slow last export can finish. */
const CLOSE_TIMEOUT_MS = 15_000;

export interface WorkerLink {
  /** Queues an exchange, with where its span goes when it is sampled. */
  record(facts: ExchangeFacts, span: SpanPlacement | undefined): void;
  /** The Prometheus text, after every entry recorded so far. */
  scrape(): Promise<string>;
  /** Exports what is pending, stops the worker; resolves to a warning when the export failed. */
  close(): Promise<string | undefined>;
}

/**
 * Run from the sources (the tests), the worker's entry is TypeScript and needs the loader the
 * tests run under; the built package runs worker.js as it is.
 */
function workerEntry(): { url: URL; execArgv?: string[] } {
  const fromSource = import.meta.url.endsWith('.ts');
  const url = new URL(fromSource ? './worker.ts' : './worker.js', import.meta.url);
  return fromSource ? { url, execArgv: [...process.execArgv, '--import', 'tsx'] } : { url };
}

export async function startWorker(init: WorkerInit, onExit: (reason: string) => void): Promise<WorkerLink> {
  const entry = workerEntry();
  const worker = new Worker(entry.url, {
    workerData: init,
    ...(entry.execArgv ? { execArgv: entry.execArgv } : {}),
  });
  const ready = await waitFor(worker, START_TIMEOUT_MS, 'start', (m) => m.type !== 'scraped');
  if (ready.type === 'failed') {
    await worker.terminate();
    throw ready.usage ? usageError(ready.message) : runtimeError(ready.message);
  }
  // Referenced only while start or close waits for it: it never keeps the process alive.
  worker.unref();

  let running = true;
  worker.on('error', (err: Error) => onExit(`telemetry worker failed: ${err.message}`));
  worker.on('exit', () => {
    if (running) onExit('telemetry worker stopped; telemetry is off from here on');
    running = false;
  });

  const metrics = init.settings.metrics !== undefined || init.settings.prometheus !== undefined;
  const batch = new BatchBuilder(metrics);
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (batch.size === 0 || !running) return;
    worker.postMessage({ type: 'batch', batch: batch.take() } satisfies ToWorker);
  };

  const pending = new Map<number, { resolve(text: string): void; reject(err: Error): void }>();
  let nextId = 0;
  worker.on('message', (message: FromWorker) => {
    if (message.type !== 'scraped') return;
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.text !== undefined) waiter?.resolve(message.text);
    else waiter?.reject(new Error(message.error));
  });

  return {
    record(facts, span) {
      if (!running) return;
      batch.add(facts, span);
      if (batch.size >= BATCH_SIZE) flush();
      else timer ??= setTimeout(flush, FLUSH_MS).unref();
    },
    scrape() {
      if (!running) return Promise.reject(new Error('the telemetry worker is not running'));
      flush();
      const id = nextId++;
      return new Promise<string>((resolve, reject) => {
        const timeout = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`no metrics from the telemetry worker within ${SCRAPE_TIMEOUT_MS} ms`));
        }, SCRAPE_TIMEOUT_MS).unref();
        pending.set(id, {
          resolve: (text) => (clearTimeout(timeout), resolve(text)),
          reject: (err) => (clearTimeout(timeout), reject(err)),
        });
        worker.postMessage({ type: 'scrape', id } satisfies ToWorker);
      });
    },
    async close() {
      if (!running) return undefined;
      flush();
      running = false;
      worker.ref();
      worker.postMessage({ type: 'close' } satisfies ToWorker);
      const closed = await waitFor(worker, CLOSE_TIMEOUT_MS, 'close', (m) => m.type === 'closed').catch(
        (err: Error) => ({ type: 'closed' as const, warning: err.message }),
      );
      await worker.terminate();
      return closed.type === 'closed' ? closed.warning : undefined;
    },
  };
}

/** The worker's next message `wanted` accepts, within `ms`; its exit or error first rejects. */
async function waitFor(
  worker: Worker,
  ms: number,
  what: string,
  wanted: (message: FromWorker) => boolean,
): Promise<FromWorker> {
  const controller = new AbortController();
  const timeout = setTimeout(() => controller.abort(), ms).unref();
  try {
    for (;;) {
      const [event, value] = await Promise.race([
        once(worker, 'message', { signal: controller.signal }).then(([m]) => ['message', m] as const),
        once(worker, 'error', { signal: controller.signal }).then(([e]) => ['error', e] as const),
        once(worker, 'exit', { signal: controller.signal }).then(([c]) => ['exit', c] as const),
      ]);
      if (event === 'message' && wanted(value as FromWorker)) return value as FromWorker;
      if (event === 'error') throw runtimeError(`telemetry worker: ${(value as Error).message}`);
      if (event === 'exit')
        throw runtimeError(`telemetry worker exited (code ${String(value)}) during ${what}`);
    }
  } catch (err) {
    if (controller.signal.aborted)
      throw runtimeError(`telemetry worker: no answer to ${what} within ${ms} ms`);
    throw err;
  } finally {
    clearTimeout(timeout);
    controller.abort();
  }
}
