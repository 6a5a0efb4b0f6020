/**
 * A real Prometheus server (Debian's `prometheus` package) scraping given targets every second,
 * on a free loopback port, stopped by PID. Tests ask it what it scraped through its HTTP API.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

export interface PrometheusSample {
  labels: Record<string, string>;
  value: number;
}

export interface PrometheusServer {
  url: string;
  pid: number;
  /** An instant query: the series and their values. */
  query(expr: string): Promise<PrometheusSample[]>;
  /** Waits (bounded) until the query returns what `ready` accepts. */
  waitFor(
    expr: string,
    ready: (samples: PrometheusSample[]) => boolean,
    timeoutMs?: number,
  ): Promise<PrometheusSample[]>;
  stop(): Promise<void>;
}

export async function startPrometheus(targets: string[]): Promise<PrometheusServer> {
  try {
    execFileSync('prometheus', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error(
      'prometheus is needed by the telemetry tests; install it with `apt-get install --no-install-recommends prometheus`',
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'moat-prometheus-'));
  const port = await freePort();
  const config = join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    `global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: moat
    static_configs:
      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]
`,
  );
  const child = spawn(
    'prometheus',
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  child.stdout.on('data', (d: Buffer) => (log += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (log += d.toString('utf8')));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopProcess(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`prometheus exited:\n${log}`);
      if (Date.now() > deadline) throw new Error(`prometheus did not become ready:\n${log}`);
      const ready = await fetch(`${url}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await stop();
    throw err;
  }

  const server: PrometheusServer = {
    url,
    pid: child.pid as number,
    async query(expr) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
      const body = (await res.json()) as {
        status: string;
        error?: string;
        data?: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
      };
      if (body.status !== 'success') throw new Error(`prometheus query ${expr}: ${body.error ?? res.status}`);
      return (body.data?.result ?? []).map((r) => ({ labels: r.metric, value: Number(r.value[1]) }));
    },
    async waitFor(expr, ready, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      let last: PrometheusSample[] = [];
      while (Date.now() < deadline) {
        last = await server.query(expr);
        if (ready(last)) return last;
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error(
        `prometheus: ${expr} never got ready within ${timeoutMs} ms; last: ${JSON.stringify(last)}`,
      );
    },
    stop,
  };
  return server;
}

function stopProcess(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.pid === undefined) return resolve();
    child.once('exit', () => resolve());
    process.kill(child.pid, 'SIGTERM');
  });
}
