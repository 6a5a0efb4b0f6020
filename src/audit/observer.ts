/**
 * The auditor: an observer of client exchanges. The proxy reports each exchange when it ends (who,
 * what MCP message, what was decided, how it was answered), and the auditor writes one JSON line
 * for it, to stdout or the config's logFile (append, mode 0600). Tokens, secrets and headers other
 * than the user agent are never written; request and response bodies only when the config asks
 * for them, cut at maxDataSize.
 *
 * Lines are batched: the events of one turn of the event loop go out in one write at its end
 * (one system call instead of one per exchange, under load). The log file is written
 * synchronously, as Node writes stdout to files and pipes: a batch is in the kernel when its turn
 * ends, and it costs one system call on this thread rather than a hand-off to libuv's thread pool
 * and back, which under load cost more than building the events. close() writes what is pending
 * before it closes the file, and so does the process's exit, so no line is lost when the proxy
 * stops.
 */
import { closeSync, open, writeSync } from 'node:fs';
import {
  errorResponses,
  everyResponse,
  type ExchangeObserver,
  type ExchangeSummary,
} from '../mcp/exchange.js';
import { errorMessage, usageError } from '../util/errors.js';
import { log } from '../util/log.js';
import type { AuditSettings } from './config.js';
import { eventLine, eventType } from './event.js';

export interface AuditorOptions {
  /** Where events go instead of stdout or the log file (tests). */
  sink?: NodeJS.WritableStream;
}

/** Where batches of lines go. */
interface LineSink {
  write(text: string): void;
  close(): void;
}

export async function createAuditor(
  settings: AuditSettings,
  options: AuditorOptions = {},
): Promise<ExchangeObserver> {
  const sink =
    settings.logFile && !options.sink
      ? await openLogFile(settings.logFile)
      : streamSink(options.sink ?? process.stdout);

  const wanted = (type: string): boolean =>
    (settings.eventTypes === undefined || settings.eventTypes.has(type)) &&
    !settings.excludeEventTypes.has(type);

  let pending = '';
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (pending === '') return;
    const text = pending;
    pending = '';
    sink.write(text);
  };
  const write = (line: string): void => {
    pending += line;
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  flushedAtExit.add(flush);

  return {
    // The answer itself is logged, or only whether it was an error.
    ...(settings.includeResponseData
      ? { needsResponse: everyResponse }
      : settings.detectApplicationErrors
        ? { needsResponse: errorResponses }
        : {}),
    onExchange(summary: ExchangeSummary): void {
      try {
        const type = eventType(summary.httpMethod, summary.record);
        if (!wanted(type)) return;
        const { response } = summary.record;
        const line = eventLine(summary, {
          type,
          component: settings.component,
          detectApplicationErrors: settings.detectApplicationErrors,
          requestData:
            settings.includeRequestData && summary.requestBody !== undefined
              ? truncate(summary.requestBody.toString('utf8'), settings.maxDataSize)
              : undefined,
          responseData:
            settings.includeResponseData && response !== undefined
              ? truncate(JSON.stringify(response), settings.maxDataSize)
              : undefined,
        });
        write(line);
      } catch (err) {
        log().error({ err: errorMessage(err) }, 'could not write an audit event');
      }
    },
    close: () => {
      flushedAtExit.delete(flush);
      flush();
      sink.close();
      return Promise.resolve();
    },
  };
}

/** The open auditors' flushes: a process.exit() without close() still writes the last turn's lines. */
const flushedAtExit = new Set<() => void>();
process.on('exit', () => {
  for (const flush of flushedAtExit) flush();
});

function streamSink(stream: NodeJS.WritableStream): LineSink {
  return { write: (text) => stream.write(text), close: () => undefined };
}

/**
 * The log file: each batch appended with one synchronous write of the string (Node encodes it
 * outside the JS heap, so no Buffer copy per batch for the collector); a short write, rare for a
 * file, is finished from the encoded bytes. A failed write is logged and dropped.
 */
async function openLogFile(path: string): Promise<LineSink> {
  let fd: number;
  try {
    fd = await new Promise<number>((resolve, reject) =>
      open(path, 'a', 0o600, (err, opened) => (err ? reject(err) : resolve(opened))),
    );
  } catch (err) {
    throw usageError(`audit config logFile: cannot open ${path} for appending: ${errorMessage(err)}`);
  }
  let closed = false;
  return {
    write: (text) => {
      if (closed) return;
      try {
        const written = writeSync(fd, text);
        const length = Buffer.byteLength(text);
        if (written < length) {
          const bytes = Buffer.from(text);
          for (let at = written; at < length;) at += writeSync(fd, bytes, at);
        }
      } catch (err) {
        log().error({ err: errorMessage(err), path }, 'audit log write failed');
      }
    },
    close: () => {
      if (closed) return;
      closed = true;
      closeSync(fd);
    },
  };
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…[truncated ${text.length - max} characters]`;
}
