/**
 * The dashboard's HTTP server: every request passes the gate (gate.ts), every answer carries
 * the security headers; pages are shells (page.ts), data comes from the JSON and SSE routes.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { ContainerRuntime } from '../runtime/types.js';
import { errorMessage, MoatError } from '../util/errors.js';
import type { WorkloadStore } from '../workloads/store.js';
import { WorkloadFeed } from './feed.js';
import { Gate, dashboardHostNames } from './gate.js';
import { auditFilters } from './audit-filters.js';
import { recentAuditEvents } from './audit.js';
import { MetricsSampler } from './metrics.js';
import { clientRows, groupRows } from './clients.js';
import { pageHtml } from './page.js';
import { runRegistryEntry, searchRegistry, type RunMoat } from './registry.js';
import type { ActionResult, WorkloadAction } from './shared.js';
import { callFromForm, workloadGet, workloadPostVerb } from './workload-routes.js';
import { runWorkloadAction } from './workloads.js';

export interface UiServerOptions {
  host: string;
  /** 0: a free port. */
  port: number;
  store: WorkloadStore;
  runtime: () => Promise<ContainerRuntime>;
  /** Runs the real `moat` CLI (the registry page runs entries with `moat run <entry>`). */
  runMoat: RunMoat;
}

export interface UiServer {
  /** The dashboard's address (no token). */
  url: string;
  /** The link to print: the address with the one-time login token. */
  loginUrl: string;
  close(): Promise<void>;
}

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // Images and audio in tool results are shown only from the data: URLs the result carries.
  "img-src 'self' data:",
  'media-src data:',
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};

const ASSETS: Record<string, string> = {
  '/assets/app.js': 'text/javascript; charset=utf-8',
  '/assets/app.css': 'text/css; charset=utf-8',
};
const ASSETS_DIR = new URL('./assets/', import.meta.url);

const MAX_BODY = 64 * 1024;
const HEARTBEAT_MS = 25_000;

export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const feed = new WorkloadFeed(options.store, options.runtime);
  await feed.start();
  const sampler = new MetricsSampler(options.store);
  sampler.start();
  let gate: Gate | undefined = undefined;
  const server = createServer((req, res) => {
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
    if (!gate) return sendText(res, 503, 'starting');
    handle(gate, { feed, sampler }, options, req, res).catch((err: unknown) => {
      const status = err instanceof MoatError ? err.httpStatus : 500;
      if (!res.headersSent) sendJson(res, status, { ok: false, message: errorMessage(err) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: options.host, port: options.port }, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  gate = new Gate(dashboardHostNames(options.host), port);
  const shownHost = ['0.0.0.0', '::', '[::]'].includes(options.host) ? '127.0.0.1' : options.host;
  const url = `http://${shownHost.includes(':') && !shownHost.startsWith('[') ? `[${shownHost}]` : shownHost}:${port}/`;
  return {
    url,
    loginUrl: `${url}?token=${gate.token}`,
    close: async () => {
      feed.close();
      sampler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What the server keeps running for the pages: the workloads feed, the metrics reader. */
interface Live {
  feed: WorkloadFeed;
  sampler: MetricsSampler;
}

async function handle(
  gate: Gate,
  { feed, sampler }: Live,
  options: UiServerOptions,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const origin = gate.checkOrigin(req);
  if (!origin.ok) return sendText(res, origin.status, origin.message);
  const url = new URL(req.url ?? '/', 'http://dashboard');
  const token = url.searchParams.get('token');
  if (req.method === 'GET' && url.pathname === '/' && token !== null) {
    const session = gate.login(token);
    if (!session)
      return sendText(
        res,
        401,
        'this link is not valid (it works once): run "moat ui --stop", then "moat ui"',
      );
    res.setHeader('set-cookie', gate.cookie());
    res.writeHead(303, { location: '/' }).end();
    return;
  }
  const session = gate.checkSession(req);
  if (!session.ok) return sendText(res, session.status, session.message);

  const ctx = { store: options.store, runtime: options.runtime };
  const page = /^\/workloads\/([^/]+)$/.exec(url.pathname);
  const api = /^\/api\/workloads\/([^/]+)\/(.+)$/.exec(url.pathname);
  const name = decodeURIComponent((page ?? api)?.[1] ?? '');
  if (req.method === 'GET') {
    if (url.pathname === '/') return sendHtml(res, pageHtml('workloads'));
    if (url.pathname === '/audit') return sendHtml(res, pageHtml('audit'));
    if (url.pathname === '/metrics') return sendHtml(res, pageHtml('metrics'));
    if (url.pathname === '/api/metrics') return sendJson(res, 200, sampler.snapshot());
    if (url.pathname === '/clients') return sendHtml(res, pageHtml('clients'));
    if (url.pathname === '/api/clients') return sendJson(res, 200, await clientRows(options.store));
    if (url.pathname === '/groups') return sendHtml(res, pageHtml('groups'));
    if (url.pathname === '/api/groups') return sendJson(res, 200, await groupRows(options.store));
    if (url.pathname === '/registry') return sendHtml(res, pageHtml('registry'));
    if (url.pathname === '/api/registry')
      return sendJson(res, 200, await searchRegistry(url.searchParams.get('q') ?? ''));
    if (url.pathname === '/api/audit')
      return sendJson(res, 200, await recentAuditEvents(options.store, auditFilters(url)));
    if (page) return sendHtml(res, pageHtml('workload', { workload: name }));
    const asset = ASSETS[url.pathname];
    if (asset) return sendAsset(res, url.pathname, asset);
    if (url.pathname === '/api/workloads/events') return streamWorkloads(feed, req, res);
    if (api && (await workloadGet(ctx, name, api[2]!, url, req, res, sendJson))) return;
    return sendText(res, 404, 'not found');
  }
  const verb = api ? workloadPostVerb(api[2]!) : undefined;
  const registryRun = url.pathname === '/api/registry/run';
  if (req.method !== 'POST') return sendText(res, 405, 'method not allowed');
  if (!verb && !registryRun) return sendJson(res, 404, { ok: false, message: 'not found' });
  const change = gate.checkChange(req);
  if (!change.ok) return sendJson(res, change.status, { ok: false, message: change.message });
  const body = await readJsonBody(req);
  if (registryRun) {
    const message = await runRegistryEntry(body, options.runMoat);
    feed.changed();
    return sendJson(res, 200, { ok: true, message });
  }
  if (!verb) return;
  if (verb === 'call') return sendJson(res, 200, await callFromForm(options.store, name, body));
  return act(feed, options, name, verb, res);
}

async function act(
  feed: WorkloadFeed,
  options: UiServerOptions,
  name: string,
  verb: WorkloadAction,
  res: ServerResponse,
): Promise<void> {
  let status = 200;
  let result: ActionResult;
  try {
    result = { ok: true, message: await runWorkloadAction(options.store, name, verb, options.runtime) };
  } catch (err) {
    status = err instanceof MoatError ? err.httpStatus : 500;
    result = { ok: false, message: errorMessage(err) };
  }
  feed.changed();
  sendJson(res, status, result);
}

/** Server-sent events: the current workloads at once, then every change. */
function streamWorkloads(feed: WorkloadFeed, req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
  res.write(': workloads\n\n');
  const unsubscribe = feed.subscribe((json) => res.write(`event: workloads\ndata: ${json}\n\n`));
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
  req.once('close', () => {
    clearInterval(heartbeat);
    unsubscribe();
  });
}

/** A change's body: JSON, at most 64 KiB; its content is not used by the workload actions. */
async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY)
      throw new MoatError('usage', 'the request body is larger than 64 KiB', { httpStatus: 413 });
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text === '' ? {} : (JSON.parse(text) as unknown);
  } catch {
    throw new MoatError('usage', 'the request body is not JSON');
  }
}

async function sendAsset(res: ServerResponse, path: string, type: string): Promise<void> {
  const body = await readFile(new URL(path.slice('/assets/'.length), ASSETS_DIR));
  res.writeHead(200, { 'content-type': type }).end(body);
}

function sendHtml(res: ServerResponse, html: string): void {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${text}\n`);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
