/**
 * `moat ui` for the dashboard tests: started in the background with the test's MOAT_HOME (the
 * real CLI path, its link read from stdout), stopped with `moat ui --stop`; plus a raw HTTP
 * client that can send any Host, Origin and Cookie (fetch would not let a test forge Host).
 */
import { request } from 'node:http';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { moatOk, printedUrl } from './moat-cli.js';

export interface Dashboard {
  /** http://127.0.0.1:PORT/ */
  url: string;
  /** The printed one-time link. */
  loginUrl: string;
  stop(): Promise<void>;
}

export async function startDashboard(home: string): Promise<Dashboard> {
  const loginUrl = printedUrl(await moatOk(home, ['ui']));
  const url = new URL(loginUrl);
  url.search = '';
  return { url: url.href, loginUrl, stop: async () => void (await moatOk(home, ['ui', '--stop'])) };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request with exactly the headers given (Host included). */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.once('error', reject);
    req.end(options.body);
  });
}

/** Where this run's screenshots go (printed by the test that writes them). */
export function screenshotDir(): string {
  const dir = process.env.MOAT_UI_SCREENSHOTS ?? join(tmpdir(), `moat-ui-screenshots-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}
