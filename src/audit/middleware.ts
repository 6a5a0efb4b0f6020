/**
 * The audit edge middleware. It is the outermost of Moat's middlewares, so requests refused by
 * authentication, authorization or webhooks are recorded too. It writes one JSON line per
 * request when the response has ended, to stdout or the config's logFile (append, mode 0600).
 * Tokens, secrets and headers other than the user agent are never written; request and response
 * bodies only when the config asks for them, cut at maxDataSize.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type { ServerResponse } from 'node:http';
import { readMessage } from '../proxy/pipeline/message.js';
import type { EdgeMiddleware, EdgeRequest } from '../proxy/types.js';
import { errorMessage, usageError } from '../util/errors.js';
import { log } from '../util/log.js';
import type { AuditSettings } from './config.js';
import { buildEvent, eventType, type AuditEvent } from './event.js';

export interface Auditor {
  middleware: EdgeMiddleware;
  close(): Promise<void>;
}

export interface AuditorOptions {
  /** The client-facing transport, recorded as `sse` or `http`. */
  transport: 'streamable-http' | 'sse';
  /** Where events go instead of stdout or the log file (tests). */
  sink?: NodeJS.WritableStream;
}

export async function createAuditor(settings: AuditSettings, options: AuditorOptions): Promise<Auditor> {
  let file: WriteStream | undefined;
  if (!options.sink && settings.logFile) file = await openLogFile(settings.logFile);
  const sink = options.sink ?? file ?? process.stdout;
  const transport = options.transport === 'sse' ? 'sse' : 'http';

  const wanted = (type: string): boolean =>
    (settings.eventTypes === undefined || settings.eventTypes.has(type)) &&
    !settings.excludeEventTypes.has(type);

  const write = (event: AuditEvent): void => {
    sink.write(`${JSON.stringify(event)}\n`);
  };

  const middleware: EdgeMiddleware = async (request, next) => {
    const started = Date.now();
    const response = observeResponse(request.res, settings.includeResponseData ? settings.maxDataSize : 0);
    let failed = false;
    try {
      await next();
      if (!request.res.writableFinished) await finished(request.res).catch(() => undefined);
    } catch (err) {
      failed = true;
      throw err;
    } finally {
      try {
        const status = failed && !request.res.headersSent ? 500 : request.res.statusCode;
        const requestText = await requestBody(request, status);
        const type = eventType(request.req.method ?? 'GET', request.annotations);
        if (wanted(type)) {
          write(
            buildEvent({
              type,
              component: settings.component,
              started,
              ended: Date.now(),
              status,
              path: new URL(request.req.url ?? '/', 'http://x').pathname,
              identity: request.identity,
              clientAddress: request.clientAddress,
              userAgent: request.req.headers['user-agent'],
              sessionId: sessionIdOf(request),
              transport,
              annotations: request.annotations,
              detectApplicationErrors: settings.detectApplicationErrors,
              responseBytes: response.bytes(),
              requestData:
                settings.includeRequestData && requestText !== undefined
                  ? truncate(requestText, settings.maxDataSize)
                  : undefined,
              responseData: settings.includeResponseData ? response.captured() : undefined,
            }),
          );
        }
      } catch (err) {
        log().error({ err: errorMessage(err) }, 'could not write an audit event');
      }
    }
  };

  return {
    middleware,
    close: async () => {
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

/**
 * The request body as text, when it was read (and parsed) for the request anyway. A request
 * refused before its body was read (e.g. 401) is not read just for the audit log; a forwarded
 * request nobody parsed (no policy configured) is parsed here so the event names its method.
 */
async function requestBody(request: EdgeRequest, status: number): Promise<string | undefined> {
  if (request.req.method !== 'POST') return undefined;
  const consumed = request.annotations.method !== undefined || request.annotations.deniedBy !== undefined;
  if (!consumed && status >= 400) return undefined;
  try {
    await readMessage(request);
    return (await request.readBody()).toString('utf8');
  } catch {
    return undefined;
  }
}

function sessionIdOf(request: EdgeRequest): string | undefined {
  const fromHeader = request.req.headers['mcp-session-id'] ?? request.res.getHeader('mcp-session-id');
  if (typeof fromHeader === 'string') return fromHeader;
  const query = new URL(request.req.url ?? '/', 'http://x').searchParams.get('sessionId');
  return query ?? undefined;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…[truncated ${text.length - max} characters]`;
}

/** Counts response bytes and keeps the first `captureBytes` of them. */
function observeResponse(res: ServerResponse, captureBytes: number): { bytes(): number; captured(): string } {
  let total = 0;
  const kept: Buffer[] = [];
  let keptBytes = 0;
  const observe = (chunk: unknown, encoding?: unknown): void => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const buffer =
      typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
        : Buffer.from(chunk as Uint8Array);
    total += buffer.length;
    if (keptBytes < captureBytes) {
      const part = buffer.subarray(0, captureBytes - keptBytes);
      kept.push(part);
      keptBytes += part.length;
    }
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.write = ((...args: unknown[]) => {
    observe(args[0], args[1]);
    return write(...args);
  }) as typeof res.write;
  res.end = ((...args: unknown[]) => {
    observe(args[0], args[1]);
    return end(...args);
  }) as typeof res.end;
  return { bytes: () => total, captured: () => Buffer.concat(kept).toString('utf8') };
}
