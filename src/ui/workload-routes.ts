/**
 * The routes of one workload (`/api/workloads/<name>/...`): its capabilities and a tool call
 * through its proxy, its exported RunConfig, its logs as a live tail, and the lifecycle actions.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import type { ContainerRuntime } from '../runtime/types.js';
import { usageError } from '../util/errors.js';
import { loadWorkload, unknownWorkload } from '../workloads/lifecycle.js';
import { writeLogs } from '../workloads/logs.js';
import type { WorkloadStore } from '../workloads/store.js';
import { callTool, listCapabilities } from './inspect.js';
import { WORKLOAD_ACTIONS, type WorkloadAction } from './shared.js';

export interface WorkloadContext {
  store: WorkloadStore;
  runtime: () => Promise<ContainerRuntime>;
}

export type Send = (res: ServerResponse, status: number, body: unknown) => void;

/** GET routes: `capabilities`, `runconfig`, `logs/proxy`, `logs/server`; false when none matched. */
export async function workloadGet(
  ctx: WorkloadContext,
  name: string,
  rest: string,
  url: URL,
  req: IncomingMessage,
  res: ServerResponse,
  send: Send,
): Promise<boolean> {
  if (rest === 'capabilities') {
    send(res, 200, await listCapabilities(await workloadUrl(ctx.store, name)));
  } else if (rest === 'runconfig') {
    const workload = await loadWorkload(ctx.store, name);
    if (!workload.config) throw unknownWorkload(name);
    const { exportedRunConfig } = await import('../config/runconfig.js');
    if (url.searchParams.has('download'))
      res.setHeader('content-disposition', `attachment; filename="${name}.json"`);
    send(res, 200, exportedRunConfig(workload.config));
  } else if (rest === 'logs/proxy' || rest === 'logs/server') {
    await tailLogs(ctx, name, rest === 'logs/proxy', req, res);
  } else {
    return false;
  }
  return true;
}

/** The POST routes' verb: a lifecycle action, or `tools/call`. */
export function workloadPostVerb(rest: string): WorkloadAction | 'call' | undefined {
  if (rest === 'tools/call') return 'call';
  return (WORKLOAD_ACTIONS as readonly string[]).includes(rest) ? (rest as WorkloadAction) : undefined;
}

/** A tool call from the page's form: `{ "tool": name, "arguments": {...} }`. */
export async function callFromForm(store: WorkloadStore, name: string, body: unknown): Promise<unknown> {
  const { tool, arguments: args } = (body ?? {}) as { tool?: unknown; arguments?: unknown };
  if (typeof tool !== 'string' || tool === '') throw usageError('field "tool": expected the tool name');
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    throw usageError('field "arguments": expected an object');
  return callTool(await workloadUrl(store, name), tool, args as Record<string, unknown>);
}

async function workloadUrl(store: WorkloadStore, name: string): Promise<string> {
  const workload = await loadWorkload(store, name, { validate: false });
  return workload.status?.url ?? '';
}

/** Server-sent events, one `line` event per log line, until the page goes away. */
async function tailLogs(
  ctx: WorkloadContext,
  name: string,
  proxy: boolean,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const workload = await loadWorkload(ctx.store, name, { validate: false });
  const controller = new AbortController();
  req.once('close', () => controller.abort());
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  res.write(': logs\n\n');
  let partial = '';
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) res.write(`event: line\ndata: ${line.replace(/\r/g, '')}\n\n`);
      done();
    },
  });
  try {
    await writeLogs(ctx.store, workload, ctx.runtime, out, {
      follow: true,
      proxy,
      format: 'text',
      tail: proxy ? undefined : 500,
      signal: controller.signal,
    });
  } catch (err) {
    res.write(
      `event: problem\ndata: ${err instanceof Error ? err.message.replace(/\n/g, ' ') : 'log unavailable'}\n\n`,
    );
  }
  res.end();
}
