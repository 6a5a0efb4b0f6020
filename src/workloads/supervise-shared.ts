/** What every supervise path (container, remote URL, aggregate) shares: recording and waiting. */
import type { RunningProxy } from './drivers.js';
import type { StatusChange } from './status.js';

/** Records one status change of the supervised workload. */
export type Recorder = (change: StatusChange) => Promise<unknown>;

/** The status change that says the workload is running behind `proxy`. */
export function running(proxy: RunningProxy, context: string): StatusChange {
  return {
    status: 'running',
    context,
    url: proxy.endpoint,
    port: proxy.port,
    ...(proxy.metricsUrl ? { metrics_url: proxy.metricsUrl } : {}),
  };
}

/** Resolves when the signal aborts. */
export function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
