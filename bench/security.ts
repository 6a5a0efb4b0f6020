/**
 * What inbound security costs per request: sequential streamable-HTTP tools/call round trips
 * through the proxy to a v2 SDK backend, without security and with OIDC (JWT from a real
 * oidc-provider) + Cedar + audit to a file, in one process on loopback.
 * Run: `node --import tsx bench/security.ts` (prints a Markdown table; bounded by request count).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunConfigInput } from '../src/config/runconfig.js';
import { startProxy } from '../src/proxy/index.js';
import { startV2StreamableBackend } from '../test/support/mcp-http-backends.js';
import { startTestOidcProvider } from '../test/support/oidc.js';
import { INIT_BODY, MCP_HEADERS, memoryLogger, testConfig } from '../test/support/proxy-harness.js';
import { securedConfig } from './secured-proxy.js';

const REQUESTS = 2000;
const WARMUP = 200;

const idp = await startTestOidcProvider([{ id: 'alice', groups: ['eng'] }]);
const backend = await startV2StreamableBackend();
const dir = await mkdtemp(join(tmpdir(), 'moat-bench-security-'));
const token = await idp.token('alice');

async function measure(label: string, overrides: Partial<RunConfigInput>, headers: Record<string, string>) {
  const config = testConfig(overrides);
  const { logger } = memoryLogger();
  logger.level = 'warn';
  const proxy = await startProxy(
    config,
    { kind: 'http', url: backend.url, transport: 'streamable-http', remote: false },
    { logger },
  );
  const send = async (body: unknown, extra: Record<string, string> = {}) => {
    const res = await fetch(`${proxy.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...headers, ...extra },
      body: JSON.stringify(body),
    });
    await res.text();
    if (res.status !== 200) throw new Error(`${label}: HTTP ${res.status}`);
    return res;
  };
  const session = (await send(INIT_BODY)).headers.get('mcp-session-id') ?? '';
  const call = {
    jsonrpc: '2.0',
    id: 2,
    method: 'tools/call',
    params: { name: 'echo', arguments: { text: 'x' } },
  };
  const times: number[] = [];
  for (let i = 0; i < WARMUP + REQUESTS; i++) {
    const t = performance.now();
    await send(call, { 'mcp-session-id': session });
    if (i >= WARMUP) times.push(performance.now() - t);
  }
  await proxy.close();
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] as number;
  return { label, p50: at(0.5), p99: at(0.99), mean: times.reduce((a, b) => a + b, 0) / times.length };
}

const rows = [
  await measure('no security', {}, {}),
  await measure('OIDC (JWT) + Cedar + audit file', securedConfig(idp, join(dir, 'audit.log')), {
    authorization: `Bearer ${token}`,
  }),
];
console.log(`| sequential tools/call (${REQUESTS} requests) | mean ms | p50 ms | p99 ms |`);
console.log('|---|---|---|---|');
for (const r of rows)
  console.log(`| ${r.label} | ${r.mean.toFixed(3)} | ${r.p50.toFixed(3)} | ${r.p99.toFixed(3)} |`);
const [base, secured] = rows as [(typeof rows)[0], (typeof rows)[0]];
console.log(
  `\nAdded per request: ${(secured.mean - base.mean).toFixed(3)} ms mean, ${(secured.p50 - base.p50).toFixed(3)} ms p50.`,
);
await backend.close();
await idp.close();
await rm(dir, { recursive: true, force: true });
