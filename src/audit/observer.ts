/**
 * The auditor: an observer of client exchanges. The proxy reports each exchange when it ends (who,
 * what MCP message, what was decided, how it was answered), and the auditor writes one JSON line
 * for it, to stdout or the config's logFile (append, mode 0600). Tokens, secrets and headers other
 * than the user agent are never written; request and response bodies only when the config asks
 * for them, cut at maxDataSize.
 *
 * Lines are batched: the events of one turn of the event loop go out in one write (one system
 * call instead of one per exchange, under load). close() writes what is pending before it ends
 * the file, so no line is lost when the proxy stops.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import {
  errorResponses,
  everyResponse,
  type ExchangeObserver,
  type ExchangeSummary,
} from '../mcp/exchange.js';
import { errorMessage, usageError } from '../util/errors.js';
import { log } from '../util/log.js';
import type { AuditSettings } from './config.js';
import { buildEvent, eventType, type AuditEvent } from './event.js';

export interface AuditorOptions {
  /** Where events go instead of stdout or the log file (tests). */
  sink?: NodeJS.WritableStream;
}

export async function createAuditor(
  settings: AuditSettings,
  options: AuditorOptions = {},
): Promise<ExchangeObserver> {
  let file: WriteStream | undefined;
  if (!options.sink && settings.logFile) file = await openLogFile(settings.logFile);
  const sink = options.sink ?? file ?? process.stdout;

  const wanted = (type: string): boolean =>
    (settings.eventTypes === undefined || settings.eventTypes.has(type)) &&
    !settings.excludeEventTypes.has(type);

  let pending: string[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    sink.write(text);
  };
  const write = (event: AuditEvent): void => {
    pending.push(`${JSON.stringify(event)}\n`);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };

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
        write(
          buildEvent({
            ...summary,
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
          }),
        );
      } catch (err) {
        log().error({ err: errorMessage(err) }, 'could not write an audit event');
      }
    },
    close: async () => {
      flush();
      if (file) {
        file.end();
        await finished(file).catch(() => undefined);
      }
    },
  };
}

async function openLogFile(path: string): Promise<WriteStream> {
  const stream = createWriteStream(path, { flags: 'a', mode: 0o600 });
  try {
    await once(stream, 'open');
  } catch (err) {
    throw usageError(`audit config logFile: cannot open ${path} for appending: ${errorMessage(err)}`);
  }
  stream.on('error', (err) => log().error({ err: err.message, path }, 'audit log write failed'));
  return stream;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…[truncated ${text.length - max} characters]`;
}
