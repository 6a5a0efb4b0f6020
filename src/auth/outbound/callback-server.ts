/**
 * The loopback server that receives the OAuth redirect (RFC 8252 §7.3: http://127.0.0.1:<port>/callback).
 * A request whose `state` does not match is answered 400 and ignored, so a stray or forged request
 * cannot end the flow; the flow ends with the matching redirect, an error redirect, or the timeout.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runtimeError, usageError } from '../../util/errors.js';

export const CALLBACK_PATH = '/callback';

export interface CallbackServer {
  port: number;
  redirectUri: string;
  /** Resolves with the full callback URL once a request with this state arrives. */
  waitForCallback(state: string, timeoutMs: number): Promise<URL>;
  close(): Promise<void>;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function page(title: string, text: string): string {
  const escape = (s: string): string => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html><meta charset="utf-8"><title>${escape(title)}</title><h1>${escape(title)}</h1><p>${escape(text)}</p>`;
}

export async function startCallbackServer(port: number): Promise<CallbackServer> {
  let expected: { state: string; resolve(url: URL): void; reject(err: Error): void } | undefined;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://127.0.0.1`);
    const reply = (status: number, title: string, text: string): void => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(page(title, text));
    };
    if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH) return reply(404, 'Not found', 'Not found.');
    const state = url.searchParams.get('state') ?? '';
    if (!expected || !sameSecret(state, expected.state)) {
      return reply(400, 'Authentication failed', 'The state parameter does not match a login in progress.');
    }
    const pending = expected;
    expected = undefined;
    const error = url.searchParams.get('error');
    if (error) {
      const description = url.searchParams.get('error_description');
      reply(
        400,
        'Authentication failed',
        `The authorization server answered ${error}. You can close this window.`,
      );
      pending.reject(
        runtimeError(
          `the authorization server refused the login: ${error}${description ? ` (${description})` : ''}`,
          // The OAuth error code, for a caller that reacts to it (a refused CIMD client id).
          { cause: { error } },
        ),
      );
      return;
    }
    reply(200, 'Authentication complete', 'Moat is signed in. You can close this window.');
    pending.resolve(new URL(`http://127.0.0.1:${actualPort}${req.url ?? ''}`));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? usageError(
              `the OAuth callback port ${port} is in use; choose another with --remote-auth-callback-port`,
            )
          : err,
      ),
    );
    server.listen(port, '127.0.0.1', resolve);
  });
  const actualPort = (server.address() as AddressInfo).port;
  return {
    port: actualPort,
    redirectUri: `http://127.0.0.1:${actualPort}${CALLBACK_PATH}`,
    waitForCallback(state, timeoutMs) {
      return new Promise<URL>((resolve, reject) => {
        const timer = setTimeout(() => {
          expected = undefined;
          reject(
            runtimeError(
              `remote authentication timed out after ${Math.round(timeoutMs / 1000)}s waiting for the browser login (raise --remote-auth-timeout)`,
            ),
          );
        }, timeoutMs);
        const done =
          <T>(fn: (v: T) => void) =>
          (v: T) => {
            clearTimeout(timer);
            fn(v);
          };
        expected = { state, resolve: done(resolve), reject: done(reject) };
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
