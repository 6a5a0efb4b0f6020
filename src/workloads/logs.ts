/** `moat logs`: the server's container output, or the supervisor/proxy log file. */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { pipeline } from 'node:stream/promises';
import type { ContainerRuntime } from '../runtime/types.js';
import { runtimeError, usageError } from '../util/errors.js';
import { textLogLines, type LogFormat } from '../util/log-format.js';
import { findContainer, hasContainer, type Workload } from './lifecycle.js';
import type { WorkloadStore } from './store.js';

export interface LogsOptions {
  follow: boolean;
  proxy: boolean;
  /** How the proxy log's JSON records are printed. */
  format: LogFormat;
  /** Only the last N lines of the container log. */
  tail?: number;
  /** Ends a --follow (Ctrl-C). */
  signal: AbortSignal;
}

export async function writeLogs(
  store: WorkloadStore,
  workload: Workload,
  runtime: () => Promise<ContainerRuntime>,
  out: NodeJS.WritableStream,
  options: LogsOptions,
): Promise<void> {
  if (options.proxy) return writeFileLog(store.logPath(workload.name), out, options);
  if (!hasContainer(workload)) {
    const what = workload.config?.aggregate ? 'an aggregate' : 'a remote server';
    throw usageError(
      `workload "${workload.name}" is ${what} with no container; use --proxy for its proxy log`,
    );
  }
  const rt = await runtime();
  const info = await findContainer(rt, workload);
  if (!info) {
    throw runtimeError(
      `workload "${workload.name}" has no container (it never started or was removed); use --proxy for its proxy log`,
    );
  }
  const stream = await rt.logs(info.id, { follow: options.follow, tail: options.tail });
  options.signal.addEventListener('abort', () => stream.destroy(), { once: true });
  await pipeline(stream, out, { end: false }).catch((err: unknown) => {
    if (!options.signal.aborted) throw err;
  });
}

/** Prints the file; with follow, keeps printing what is appended until aborted. */
async function writeFileLog(path: string, out: NodeJS.WritableStream, options: LogsOptions): Promise<void> {
  const text = options.format === 'text' ? textLogLines() : undefined;
  const ended = text ? new Promise((resolve) => text.once('end', resolve)) : undefined;
  text?.pipe(out, { end: false });
  try {
    await copyFile(path, text ?? out, options);
  } finally {
    text?.end();
    await ended;
  }
}

async function copyFile(path: string, out: NodeJS.WritableStream, options: LogsOptions): Promise<void> {
  let offset = 0;
  for (;;) {
    const size = await stat(path).then(
      (s) => s.size,
      () => 0,
    );
    if (size < offset) offset = 0; // truncated or replaced
    if (size > offset) {
      await pipeline(createReadStream(path, { start: offset, end: size - 1 }), out, { end: false });
      offset = size;
    }
    if (!options.follow || options.signal.aborted) return;
    await sleep(250, undefined, { signal: options.signal }).catch(() => undefined);
  }
}
