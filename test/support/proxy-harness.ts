/** Shared setup for proxy integration tests: RunConfigs, quiet loggers, raw HTTP helpers. */
import { runConfigSchema, type RunConfig, type RunConfigInput } from '../../src/config/runconfig.js';
import { createLogger } from '../../src/util/log.js';
import { Writable } from 'node:stream';
import type { Logger } from 'pino';

export function testConfig(overrides: Partial<RunConfigInput> = {}): RunConfig {
  return runConfigSchema.parse({
    image: 'test-image',
    name: `proxy-test-${Math.random().toString(36).slice(2, 8)}`,
    transport: 'streamable-http',
    host: '127.0.0.1',
    port: 0,
    ...overrides,
  });
}

/** A logger that keeps its lines for assertions instead of printing them. */
export function memoryLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { logger: createLogger(true, sink), lines };
}

export const INIT_BODY = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

export const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

/** POSTs a JSON-RPC body and returns status, headers and the parsed JSON (or text). */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; json: unknown; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...MCP_HEADERS, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** The JSON-RPC messages in an SSE body (data lines of each event). */
export function sseMessages(text: string): unknown[] {
  return text
    .split(/\n\n/)
    .map((event) =>
      event
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n'),
    )
    .filter((d) => d !== '')
    .map((d) => JSON.parse(d) as unknown);
}

/** The response body as messages, whether it came as JSON or as SSE. */
export function messagesOf(response: { headers: Headers; text: string }): unknown[] {
  const type = response.headers.get('content-type') ?? '';
  if (type.startsWith('text/event-stream')) return sseMessages(response.text);
  return response.text === '' ? [] : [JSON.parse(response.text) as unknown];
}

/** The JSON-RPC message of an answer body, sent as JSON or as one SSE event. */
export function messageOfAnswer<
  T = { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } },
>(text: string): T {
  const data = text.startsWith('{')
    ? text
    : text
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('');
  return JSON.parse(data) as T;
}

/** Reads SSE messages from a streamed response until `done` says so (bounded: 10 s). */
export function streamReader(response: Response) {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  return {
    async until(
      done: (messages: Array<Record<string, unknown>>) => boolean,
    ): Promise<Array<Record<string, unknown>>> {
      // Bounded even while no byte comes: a read that never returns fails the wait with what came.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`stream did not deliver in 10 s; it sent: ${text}`)),
          10_000,
        );
      });
      try {
        for (;;) {
          const messages = sseMessages(text) as Array<Record<string, unknown>>;
          if (done(messages)) return messages;
          const chunk = await Promise.race([reader.read(), late]);
          if (chunk.done) return messages;
          text += decoder.decode(chunk.value, { stream: true });
        }
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
