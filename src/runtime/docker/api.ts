/**
 * A small Docker Engine API client on node:http(s): JSON calls, streamed answers and the
 * hijacked attach connection. Only the HTTP lives here; what the calls mean to Moat is in
 * engine.ts. Hand-written because the usual npm client always loads SSH and gRPC stacks
 * (about 20 MB resident) into the long-running supervisor, which needs none of them.
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { addAbortSignal, Duplex, Readable } from 'node:stream';
import { text } from 'node:stream/consumers';

/** Where the engine listens: a unix socket, or TCP with optional mutual TLS. */
export type EngineTarget =
  { socketPath: string } | { host: string; port: number; tls?: { ca: Buffer; cert: Buffer; key: Buffer } };

/** A non-2xx answer, with the engine's own message (e.g. "no such image"). */
export class EngineApiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'EngineApiError';
  }
}

/** Objects are sent as JSON (e.g. `filters`), arrays as repeated keys, undefined is left out. */
export type Query = Record<string, string | number | boolean | readonly string[] | object | undefined>;

export interface CallOptions {
  query?: Query;
  /** A Buffer or Readable is sent as a tar archive; anything else as JSON. */
  body?: unknown;
  signal?: AbortSignal;
}

export interface JsonCallOptions extends CallOptions {
  /** Fails the call when the whole answer has not arrived by then (only the probe sets it). */
  timeoutMs?: number;
}

export function encodeQuery(query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value as readonly string[]) params.append(key, item);
    else if (typeof value === 'object') params.append(key, JSON.stringify(value));
    else params.append(key, String(value));
  }
  const encoded = params.toString();
  return encoded ? `?${encoded}` : '';
}

/** A name or ID as a path segment; image references keep their `/` (`localhost/app:1`). */
export function segment(name: string): string {
  return encodeURIComponent(name).replace(/%2F/gi, '/');
}

export class EngineApi {
  constructor(private readonly target: EngineTarget) {}

  private get tls(): { ca: Buffer; cert: Buffer; key: Buffer } | undefined {
    return 'tls' in this.target ? this.target.tls : undefined;
  }

  /** A call whose answer is read whole: parsed JSON, else text (`/_ping` says `OK`), or undefined. */
  async json<T>(method: string, path: string, options: JsonCallOptions = {}): Promise<T> {
    const { timeoutMs, ...call } = options;
    if (timeoutMs === undefined) return parseBody<T>(await text(await this.stream(method, path, call)));
    const timer = new AbortController();
    const timeout = setTimeout(() => timer.abort(), timeoutMs);
    try {
      return parseBody<T>(await text(await this.stream(method, path, { ...call, signal: timer.signal })));
    } catch (err) {
      if (timer.signal.aborted)
        throw new Error(`the engine did not answer within ${timeoutMs / 1000} s`, { cause: err });
      throw err;
    } finally {
      clearTimeout(timeout);
    }
  }

  /** A call whose answer is streamed (pull and import progress, logs). A non-2xx answer rejects. */
  stream(method: string, path: string, options: CallOptions = {}): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = this.request(method, path + encodeQuery(options.query), { signal: options.signal });
      req.once('error', reject);
      req.once('response', (res) => {
        if (!isSuccess(res)) return void failureOf(res).then(reject, reject);
        // Aborting ends the answer too, not only the request.
        if (options.signal) addAbortSignal(options.signal, res);
        resolve(res);
      });
      send(req, options.body);
    });
  }

  /**
   * A hijacked connection (attach, exec start): the socket carries the raw stream both ways. An
   * attach's request body stays EMPTY, because Podman feeds any body into the container's stdin;
   * an exec start needs its JSON `body` (Podman refuses an empty one), read whole before the hijack.
   */
  hijack(path: string, query: Query, body?: object): Promise<Duplex> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers = {
      Connection: 'Upgrade',
      Upgrade: 'tcp',
      'Content-Length': payload?.length ?? 0,
      ...(payload ? { 'Content-Type': 'application/json' } : {}),
    };
    const req = this.request('POST', path + encodeQuery(query), { headers, ownConnection: true });
    return new Promise((resolve, reject) => {
      req.once('error', reject);
      req.once('upgrade', (_res, socket, head) => {
        if (head.length > 0) socket.unshift(head);
        resolve(socket);
      });
      req.once('response', (res) => {
        if (!isSuccess(res)) return void failureOf(res).then(reject, reject);
        resolve(handedOver(res));
      });
      req.end(payload);
    });
  }

  private request(
    method: string,
    path: string,
    options: {
      headers?: http.OutgoingHttpHeaders;
      signal?: AbortSignal | undefined;
      /** A hijacked socket never returns to a pool; other calls share the global keep-alive agent. */
      ownConnection?: boolean;
    },
  ): http.ClientRequest {
    const where =
      'socketPath' in this.target
        ? { socketPath: this.target.socketPath }
        : { host: this.target.host, port: this.target.port, ...this.tls };
    const request = {
      method,
      path,
      headers: options.headers ?? {},
      ...where,
      ...(options.ownConnection ? { agent: false } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    };
    return this.tls ? https.request(request) : http.request(request);
  }
}

/**
 * An engine answering 200 instead of upgrading still hands the connection over: the answer
 * body is the output and the socket itself takes the input. Behaves like the upgraded socket
 * (destroy() without an error is a quiet close).
 */
function handedOver(res: IncomingMessage): Duplex {
  const socket = res.socket;
  const duplex = new Duplex({
    read: () => res.resume(),
    write: (chunk: Buffer, _encoding, callback) => socket.write(chunk, callback),
    final: (callback) => socket.end(callback),
    destroy: (err, callback) => {
      socket.destroy();
      callback(err);
    },
  });
  res.on('data', (chunk: Buffer) => {
    if (!duplex.push(chunk)) res.pause();
  });
  res.once('end', () => duplex.push(null));
  res.once('error', (err) => duplex.destroy(err));
  return duplex;
}

function isSuccess(res: IncomingMessage): boolean {
  const status = res.statusCode ?? 0;
  return status >= 200 && status < 300;
}

function send(req: http.ClientRequest, body: unknown): void {
  if (body instanceof Readable) {
    req.setHeader('Content-Type', 'application/x-tar');
    body.once('error', (err) => req.destroy(err));
    body.pipe(req);
    return;
  }
  if (body === undefined) {
    req.end();
    return;
  }
  const isTar = Buffer.isBuffer(body);
  const payload = isTar ? body : Buffer.from(JSON.stringify(body));
  req.setHeader('Content-Type', isTar ? 'application/x-tar' : 'application/json');
  req.setHeader('Content-Length', payload.length);
  req.end(payload);
}

function parseBody<T>(body: string): T {
  if (body === '') return undefined as T;
  try {
    return JSON.parse(body) as T;
  } catch {
    return body as T;
  }
}

/** The engine's error answer: `{"message": "..."}` from Docker and Podman, plain text from proxies. */
async function failureOf(res: IncomingMessage): Promise<EngineApiError> {
  const status = res.statusCode ?? 0;
  const body = (await text(res)).trim();
  const json = parseBody<{ message?: unknown } | string | undefined>(body);
  const message =
    typeof json === 'object' && json !== null && typeof json.message === 'string' ? json.message : body;
  return new EngineApiError(status, message.trim() || `the engine answered HTTP ${status}`);
}
