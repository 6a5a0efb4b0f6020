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
import { buildEvent, eventType, rpcErrorCodeIn, type AuditEvent } from './event.js';

/** How much of a response is kept to recognise a JSON-RPC error answer. */
const ERROR_SCAN_BYTES = 64 * 1024;

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

  // Enough of the response to see a JSON-RPC error answer, and the part the config wants logged.
  const captureBytes = Math.max(
    settings.includeResponseData ? settings.maxDataSize : 0,
    settings.detectApplicationErrors ? ERROR_SCAN_BYTES : 0,
  );

  const write = (event: AuditEvent): void => {
    sink.write(`${JSON.stringify(event)}\n`);
  };

  const middleware: EdgeMiddleware = async (request, next) => {
    const started = Date.now();
    const response = observeResponse(request.res, captureBytes);
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
        if (settings.detectApplicationErrors && request.annotations.rpcErrorCode === undefined) {
          const code = rpcErrorCodeIn(
            response.captured(),
            response.header('content-type'),
            request.annotations.id,
          );
          if (code !== undefined) request.annotations.rpcErrorCode = code;
        }
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
              sessionId: sessionIdOf(request, response),
              transport,
              annotations: request.annotations,
              detectApplicationErrors: settings.detectApplicationErrors,
              responseBytes: response.bytes(),
              requestData:
                settings.includeRequestData && requestText !== undefined
                  ? truncate(requestText, settings.maxDataSize)
                  : undefined,
              responseData: settings.includeResponseData
                ? response.captured().subarray(0, settings.maxDataSize).toString('utf8')
                : undefined,
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

function sessionIdOf(request: EdgeRequest, response: ObservedResponse): string | undefined {
  const fromHeader = request.req.headers['mcp-session-id'] ?? response.header('mcp-session-id');
  if (typeof fromHeader === 'string') return fromHeader;
  const query = new URL(request.req.url ?? '/', 'http://x').searchParams.get('sessionId');
  return query ?? undefined;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…[truncated ${text.length - max} characters]`;
}

interface ObservedResponse {
  bytes(): number;
  captured(): Buffer;
  /** A response header, whether it was set with setHeader or passed to writeHead. */
  header(name: string): string | undefined;
}

/** Counts response bytes, keeps the first `captureBytes` of them, and notes the headers. */
function observeResponse(res: ServerResponse, captureBytes: number): ObservedResponse {
  let total = 0;
  const kept: Buffer[] = [];
  let keptBytes = 0;
  const headHeaders = new Map<string, string>();
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
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.writeHead = (...args: unknown[]) => {
    const headers = args.find((a) => typeof a === 'object' && a !== null);
    if (Array.isArray(headers)) {
      for (let i = 0; i + 1 < headers.length; i += 2)
        headHeaders.set(String(headers[i]).toLowerCase(), String(headers[i + 1]));
    } else if (headers) {
      for (const [k, v] of Object.entries(headers))
        if (v !== undefined) headHeaders.set(k.toLowerCase(), String(v));
    }
    return writeHead(...args);
  };
  res.write = ((...args: unknown[]) => {
    observe(args[0], args[1]);
    return write(...args);
  }) as typeof res.write;
  res.end = ((...args: unknown[]) => {
    observe(args[0], args[1]);
    return end(...args);
  }) as typeof res.end;
  return {
    bytes: () => total,
    captured: () => Buffer.concat(kept),
    header: (name) => {
      const set = res.getHeader(name);
      if (set !== undefined) return String(set);
      return headHeaders.get(name);
    },
  };
}
