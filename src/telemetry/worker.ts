/**
 * The telemetry worker thread's entry: a Recorder (the OpenTelemetry SDK) fed by the proxy's
 * thread through worker-link.ts. Messages in: batches of exchanges (batch.ts), scrape requests,
 * close. Messages out: ready or failed (once), scrape answers, closed.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { errorMessage, isMoatError } from '../util/errors.js';
import { createRecorder, type Recorder } from './recorder.js';
import type { ToWorker, FromWorker, WorkerInit } from './worker-link.js';

const port = parentPort!;
const send = (message: FromWorker) => port.postMessage(message);

async function main(): Promise<void> {
  const { settings, metricExportIntervalMs } = workerData as WorkerInit;
  let recorder: Recorder;
  try {
    recorder = await createRecorder(settings, metricExportIntervalMs);
  } catch (err) {
    send({ type: 'failed', message: errorMessage(err), usage: isMoatError(err) && err.kind === 'usage' });
    return;
  }
  port.on('message', (message: ToWorker) => {
    switch (message.type) {
      case 'batch':
        recorder.record(message.batch);
        return;
      case 'scrape':
        recorder.scrape().then(
          (text) => send({ type: 'scraped', id: message.id, text }),
          (err: unknown) => send({ type: 'scraped', id: message.id, error: errorMessage(err) }),
        );
        return;
      case 'close':
        void recorder.close().then((warning) => send({ type: 'closed', ...(warning ? { warning } : {}) }));
        return;
    }
  });
  send({ type: 'ready' });
}

void main();
