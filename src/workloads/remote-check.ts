/**
 * Whether a remote MCP server answers: once before `moat run <URL>` starts anything, and then
 * all along through the proxy's own health check, so `moat list` says `unhealthy` (with the
 * reason) instead of `running` while nobody can reach the remote.
 */
import { get as httpGetPlain } from 'node:http';
import { get as httpsGet } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage, runtimeError } from '../util/errors.js';
import type { StatusChange } from './status.js';

/** How long `moat run <URL>` waits for the remote server's first answer. */
export const REMOTE_CHECK_TIMEOUT_MS = 10_000;
/** How often a running remote workload's reachability is read from its proxy's /health. */
const REMOTE_WATCH_INTERVAL_MS = 10_000;
const HEALTH_READ_TIMEOUT_MS = 5_000;

/**
 * Any HTTP answer below 500 counts (a 401 of an OAuth-protected server, a 405 for GET): the
 * server is there. A refused connection, a name that does not resolve, a TLS failure, a timeout
 * or a 5xx do not.
 */
export async function checkRemoteReachable(url: string, timeoutMs = REMOTE_CHECK_TIMEOUT_MS): Promise<void> {
  let problem: string | undefined;
  try {
    const status = await httpGet(url, { accept: 'application/json, text/event-stream' }, timeoutMs);
    if (status >= 500) problem = `it answered HTTP ${status}`;
  } catch (err) {
    problem = errorMessage(err);
  }
  if (problem === undefined) return;
  throw runtimeError(
    `cannot reach the remote MCP server ${url}: ${problem}; check the URL and that the server is up, ` +
      'or start anyway with --skip-remote-check ("moat list" then shows it unhealthy until it answers)',
  );
}

/**
 * A GET whose answer's status is all that is read. node:http rather than fetch: fetch refuses
 * the "bad ports" of browsers (6000, 6665…), which are fine for an MCP server.
 */
function httpGet(url: string, headers: Record<string, string>, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const get = url.startsWith('https:') ? httpsGet : httpGetPlain;
    const req = get(url, { headers, timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    req.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new Error(
          err.code && !err.message.startsWith(err.code) ? `${err.code} (${err.message})` : err.message,
        ),
      ),
    );
  });
}

/**
 * Until `signal` aborts: records `unhealthy` when the proxy's health check finds the remote
 * unreachable, and `running` (with `runningContext`) when it answers again.
 */
export async function watchRemote(
  healthUrl: string,
  record: (change: StatusChange) => Promise<unknown>,
  runningContext: string,
  signal: AbortSignal,
): Promise<void> {
  let down = false;
  while (!signal.aborted) {
    const problem = await remoteProblem(healthUrl);
    if (problem !== undefined && !down) {
      down = true;
      await record({ status: 'unhealthy', context: `the remote server does not answer: ${problem}` });
    } else if (problem === undefined && down) {
      down = false;
      await record({ status: 'running', context: runningContext });
    }
    await sleep(REMOTE_WATCH_INTERVAL_MS, undefined, { signal }).catch(() => undefined);
  }
}

/** What the proxy's /health says is wrong with the remote; undefined when it is fine (or unknown). */
function remoteProblem(healthUrl: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const req = httpGetPlain(healthUrl, { timeout: HEALTH_READ_TIMEOUT_MS }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        try {
          const report = JSON.parse(body) as { backend?: { reachable?: boolean; error?: string } };
          resolve(report.backend?.reachable === false ? (report.backend.error ?? 'unreachable') : undefined);
        } catch {
          resolve(undefined);
        }
      });
    });
    // The proxy itself did not answer: not a fact about the remote.
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(undefined));
  });
}
