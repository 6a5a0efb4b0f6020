/**
 * A real OpenTelemetry Collector for the telemetry tests: the binary scripts/otel-collector.sh
 * builds once per machine (OTLP receiver, debug exporter), started on a free loopback port and
 * stopped by PID. What it received is read back from the debug exporter's detailed output.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

export const OTELCOL_VERSION = 'v0.165.0';

export function otelcolBinary(): string {
  const cache = process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
  const bin = join(cache, 'moat-test', 'otelcol', OTELCOL_VERSION, 'otelcol');
  if (!existsSync(bin)) {
    throw new Error(
      `the OpenTelemetry Collector is missing at ${bin}; build it with scripts/otel-collector.sh`,
    );
  }
  return bin;
}

export interface CollectedSpan {
  traceId: string;
  parentId: string;
  id: string;
  name: string;
  kind: string;
  attributes: Record<string, string>;
  /** service.name of the resource the span came with. */
  service: string;
}

export interface CollectedPoint {
  metric: string;
  attributes: Record<string, string>;
  /** Count (histograms) or Value (sums, gauges). */
  value: number;
}

export interface Collector {
  /** OTLP/HTTP base URL, e.g. http://127.0.0.1:4318. */
  endpoint: string;
  /** OTLP/gRPC `host:port`, e.g. 127.0.0.1:4317. */
  grpcEndpoint: string;
  pid: number;
  output(): string;
  spans(): CollectedSpan[];
  points(): CollectedPoint[];
  /** Waits (bounded) until `ready` holds for what arrived. */
  waitFor<T>(what: string, probe: (c: Collector) => T | undefined, timeoutMs?: number): Promise<T>;
  stop(): Promise<void>;
}

export async function startCollector(): Promise<Collector> {
  const bin = otelcolBinary();
  const dir = mkdtempSync(join(tmpdir(), 'moat-otelcol-'));
  const port = await freePort();
  const grpcPort = await freePort();
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${port}
      grpc:
        endpoint: 127.0.0.1:${grpcPort}
exporters:
  debug:
    verbosity: detailed
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [debug]
    metrics:
      receivers: [otlp]
      exporters: [debug]
`,
  );
  const child = spawn(bin, ['--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (d: Buffer) => (text += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (text += d.toString('utf8')));
  try {
    await waitUntil(
      () => text.includes('Everything is ready'),
      15_000,
      () => `collector did not start:\n${text}`,
      child,
    );
  } catch (err) {
    await stopProcess(child);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  const collector: Collector = {
    endpoint: `http://127.0.0.1:${port}`,
    grpcEndpoint: `127.0.0.1:${grpcPort}`,
    pid: child.pid as number,
    output: () => text,
    spans: () => parseSpans(text),
    points: () => parsePoints(text),
    async waitFor(what, probe, timeoutMs = 20_000) {
      let found: ReturnType<typeof probe>;
      await waitUntil(
        () => (found = probe(collector)) !== undefined,
        timeoutMs,
        () => `the collector did not receive ${what} within ${timeoutMs} ms`,
      );
      return found as NonNullable<typeof found>;
    },
    stop: async () => {
      await stopProcess(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return collector;
}

async function waitUntil(
  done: () => boolean,
  timeoutMs: number,
  message: () => string,
  child?: ChildProcess,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (child && child.exitCode !== null) throw new Error(message());
    if (Date.now() > deadline) throw new Error(message());
    await new Promise((r) => setTimeout(r, 50));
  }
}

function stopProcess(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.pid === undefined) return resolve();
    child.once('exit', () => resolve());
    process.kill(child.pid, 'SIGTERM');
  });
}

/** `-> key: Str(value)` lines of a block, as key → value (the type wrapper dropped). */
function attributesOf(block: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const m of block.matchAll(/^\s*-> ([^:\n]+): \w+\((.*)\)$/gm)) attributes[m[1]!] = m[2]!;
  return attributes;
}

function field(block: string, name: string): string {
  return new RegExp(`^\\s*${name}\\s*: ?(.*)$`, 'm').exec(block)?.[1]?.trim() ?? '';
}

function parseSpans(text: string): CollectedSpan[] {
  const spans: CollectedSpan[] = [];
  for (const resourceBlock of text.split(/ResourceSpans #\d+/).slice(1)) {
    const service = /-> service\.name: Str\((.*)\)/.exec(resourceBlock)?.[1] ?? '';
    for (const block of resourceBlock.split(/^Span #\d+/m).slice(1)) {
      const attrs = block.split(/^Attributes:/m)[1] ?? '';
      spans.push({
        traceId: field(block, 'Trace ID'),
        parentId: field(block, 'Parent ID'),
        id: field(block, 'ID'),
        name: field(block, 'Name'),
        kind: field(block, 'Kind'),
        attributes: attributesOf(attrs.split(/^(Events|Links|\S)/m)[0] ?? attrs),
        service,
      });
    }
  }
  return spans;
}

function parsePoints(text: string): CollectedPoint[] {
  const points: CollectedPoint[] = [];
  for (const block of text.split(/^Metric #\d+/m).slice(1)) {
    const metric = /-> Name: (.*)$/m.exec(block)?.[1]?.trim() ?? '';
    for (const point of block.split(/^(?:HistogramDataPoints|NumberDataPoints) #\d+/m).slice(1)) {
      const attrs = /^Data point attributes:\n((?:\s+->.*\n)*)/m.exec(point)?.[1] ?? '';
      const value = /^(?:Count|Value): (.*)$/m.exec(point)?.[1];
      points.push({ metric, attributes: attributesOf(attrs), value: Number(value) });
    }
  }
  return points;
}
