/**
 * `MOAT_BENCH_ONLY=guardrails npm run bench`: what guardrails cost. The full policy stack of
 * bench/policies.ts, without and with guardrails (every detector, redact both ways), in the same
 * interleaved rounds, for the raw JSON-RPC backend and the SDK client and server; the ratio of
 * the two is the guardrails' cost. Then the combined matcher alone on a 64 KB tool result (prose,
 * JSON, code and a few findings), in MB/s on this process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DETECTORS } from '../src/guardrails/detectors.js';
import { createMatcher } from '../src/guardrails/matcher.js';
import type { BenchKit, Row } from './bench-types.js';
import { fullStackConfig, policyConfigs, startJwksServer } from './policies.js';

const GUARDRAILS = { guardrail_config: { to_server: 'redact', to_client: 'redact' } };
const OFF = 'full policy stack';
const ON = 'full policy stack + guardrails (redact)';

export async function guardrailCells(kit: BenchKit): Promise<string[]> {
  const idp = await startJwksServer();
  const otlp = await kit.startOtlpSink();
  const auditDir = mkdtempSync(join(tmpdir(), 'moat-bench-audit-'));
  const stops: Array<() => Promise<void>> = [];
  const auth = { headers: { authorization: `Bearer ${idp.token}` } };
  try {
    const rows: Row[] = [];
    for (const [target, backend] of [
      ['http', './backend-http.ts'],
      ['sdk', './backend-sdk.ts'],
    ] as const) {
      const backendUrl = await kit.startServer(backend);
      const cells: Array<[string, object]> = [];
      for (const [label, extra] of [
        [OFF, {}],
        [ON, GUARDRAILS],
      ] as const) {
        const config = { ...fullStackConfig(policyConfigs(idp, otlp.url, auditDir)), ...extra };
        const proxy = await kit.startProxy({ kind: 'http', url: backendUrl }, 'supervisor', config);
        stops.push(() => proxy.stop());
        cells.push([`${target}: ${label}`, { target, url: proxy.url, ...auth }]);
      }
      for (const concurrency of [1, 32])
        rows.push(...(await kit.compare(concurrency, { target, url: backendUrl }, cells)));
    }
    const lines = [...kit.rowTable(rows), ''];
    for (const target of ['http', 'sdk'])
      for (const c of [1, 32]) {
        const rps = (label: string) =>
          rows.find((r) => r.path === `${target}: ${label}` && r.concurrency === c)!.proxied.rps;
        lines.push(
          `guardrails on (redact) vs off, full stack, ${target}, concurrency ${c}: ${(rps(ON) / rps(OFF)).toFixed(3)}× throughput`,
        );
      }
    lines.push('', matcherThroughput());
    return lines;
  } finally {
    for (const stop of stops) await stop();
    await Promise.all([idp.close(), otlp.close()]);
    rmSync(auditDir, { recursive: true, force: true });
  }
}

/** The combined matcher over a realistic 64 KB text, best of 5 passes. */
function matcherThroughput(): string {
  const block = [
    'The deploy ran at 2026-11-27T10:15:02Z on host build-7 (192.168.10.4); 412 files changed.',
    '{"id": "550e8400-e29b-41d4-a716-446655440000", "sha": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b", "size": 18231}',
    'const token = req.headers.authorization?.slice(7); if (!token) return res.status(401).end();',
    'Contact maria.garcia@example.com or +44 20 7946 0958 about invoice 2026-0412.',
    'export GITHUB_TOKEN=ghp_Xq7rT2mV9pL4sK8wN3bZ6cY1dF5gH0jA2eRt',
    'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore.',
  ].join('\n');
  let text = '';
  while (text.length < 64 * 1024) text += `${block}\n`;
  const matcher = createMatcher(DETECTORS);
  let best = Infinity;
  let hits = 0;
  for (let i = 0; i < 5; i++) {
    const started = process.hrtime.bigint();
    hits = matcher.scan(text).length;
    best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e6);
  }
  const mb = text.length / (1024 * 1024);
  return `combined matcher, all ${DETECTORS.length} detectors, on a ${Math.round(text.length / 1024)} KB text with ${hits} findings: ${best.toFixed(2)} ms (${(mb / (best / 1000)).toFixed(1)} MB/s)`;
}
