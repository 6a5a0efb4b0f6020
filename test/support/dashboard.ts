/**
 * `moat ui` for the dashboard tests: started in the background with the test's MOAT_HOME (the
 * real CLI path, its link read from stdout), stopped with `moat ui --stop`; plus a raw HTTP
 * client that can send any Host, Origin and Cookie (fetch would not let a test forge Host).
 */
import { request } from 'node:http';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium, type TestBrowser } from './browser.js';
import { moatOk, printedUrl } from './moat-cli.js';

export interface Dashboard {
  /** http://127.0.0.1:PORT/ */
  url: string;
  /** The printed one-time link. */
  loginUrl: string;
  stop(): Promise<void>;
}

export async function startDashboard(home: string, env: NodeJS.ProcessEnv = {}): Promise<Dashboard> {
  const loginUrl = printedUrl(await moatOk(home, ['ui'], env));
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

/** A dashboard, a Chromium logged in to it (one page), and this run's screenshot folder. */
export interface DashboardInChromium {
  dashboard: Dashboard;
  browser: TestBrowser;
  page: Page;
  screens: string;
  close(): Promise<void>;
}

/** Starts `moat ui` (with `env` added to its environment) and logs a new Chromium page in. */
export async function dashboardInChromium(
  home: string,
  env: NodeJS.ProcessEnv = {},
): Promise<DashboardInChromium> {
  const dashboard = await startDashboard(home, env);
  const browser = await launchChromium();
  const page = await browser.context.newPage();
  await page.goto(dashboard.loginUrl);
  const screens = screenshotDir();
  console.log(`moat ui screenshots: ${screens}`);
  return {
    dashboard,
    browser,
    page,
    screens,
    close: async () => {
      await browser.close();
      await dashboard.stop();
    },
  };
}
