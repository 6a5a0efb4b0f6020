/**
 * The policy-stack cells of `npm run bench` (alone: `MOAT_BENCH_ONLY=policies npm run bench`).
 *
 * The raw JSON-RPC backend and the SDK backend behind Moat with:
 *   - no policies (the reference row of the same rounds);
 *   - the full stack: OIDC JWT validation (a real RS256 JWT, verified against a JWKS this module
 *     serves over HTTP on loopback: `startJwksServer`), Cedar authorization (the policy set below),
 *     audit to a file, a tool filter, and telemetry (OTLP traces at sampling 0.1 and metrics,
 *     exported to run.ts's OTLP/HTTP sink, which reads and drops every export);
 *   - each of those policies alone, so a regression points at its cause (raw cells);
 *   - the minimal Node.js proxy (bench/pipe-proxy.ts), the floor of these rounds (raw and SDK
 *     cells): the section runs many proxies in long rounds, and its no-policy ratios are read
 *     against this reference of the same rounds rather than against another section's;
 *   - with MOAT_BENCH_BASELINE=<dir> (a `dist/` built from another commit), the full stack, no
 *     policies and the observers alone (audit, OTel: raw cells) run by that build too, in the same
 *     rounds: the before/after comparison on a loaded machine.
 * Every row is a ratio to direct in the same interleaved rounds (run.ts's `compare`).
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

import type { BenchKit, PolicyBench, ProxyProcess, Row, TargetResult } from './bench-types.js';

const AUDIENCE = 'https://bench.moat.test/mcp';
const SUBJECT = 'bench-user';

/** A realistic Cedar policy set: group permits, an admin-only rule, a forbid on risky arguments. */
export const CEDAR_POLICIES = [
  'permit(principal in MoatGroup::"engineering", action == Action::"call_tool", resource in MCP::"bench");',
  'permit(principal in MoatGroup::"admins", action, resource);',
  'permit(principal, action == Action::"call_tool", resource == Tool::"echo") when { principal has claim_sub };',
  'forbid(principal, action == Action::"call_tool", resource) when { resource has destructiveHint && resource.destructiveHint == true } unless { principal in MoatGroup::"admins" };',
  'forbid(principal, action, resource) when { context has arg_path && context.arg_path like "/etc/*" };',
  'permit(principal, action == Action::"get_prompt", resource) when { principal has claim_email && principal.claim_email like "*@example.com" };',
];

/** A JWKS endpoint with one RS256 key, and a token it signed for the bench user (1 h). */
export async function startJwksServer(): Promise<{
  issuer: string;
  jwksUrl: string;
  token: string;
  close(): Promise<void>;
}> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const kid = `bench-${randomUUID()}`;
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' }] });
  const server = createServer((req, res) => {
    if (req.url === '/jwks') res.writeHead(200, { 'content-type': 'application/json' }).end(jwks);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const token = await new SignJWT({
    groups: ['engineering'],
    email: 'bench@example.com',
    name: 'Bench User',
    scope: 'mcp:tools',
  })
    .setProtectedHeader({ alg: 'RS256', kid })
    .setIssuer(issuer)
    .setSubject(SUBJECT)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(privateKey);
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

type PolicyName = 'JWT' | 'Cedar' | 'audit to file' | 'tool filter' | 'OTel 0.1';
const POLICIES: PolicyName[] = ['JWT', 'Cedar', 'audit to file', 'tool filter', 'OTel 0.1'];
/** The exchange observers, also run alone by the baseline build: their shared path is theirs to compare. */
const OBSERVERS: PolicyName[] = ['audit to file', 'OTel 0.1'];

/** RunConfig fields for each policy. */
/** RS256 JWT validation against the bench's JWKS server (ToolHive's field names; Moat reads them too). */
export function oidcConfigFor(idp: { issuer: string; jwksUrl: string }): object {
  return {
    Issuer: idp.issuer,
    JWKSURL: idp.jwksUrl,
    Audience: AUDIENCE,
    InsecureAllowHTTP: true,
    AllowPrivateIP: true,
  };
}

export function policyConfigs(
  idp: { issuer: string; jwksUrl: string },
  otlpUrl: string,
  auditDir: string,
): Record<PolicyName, object> {
  return {
    JWT: { oidc_config: oidcConfigFor(idp) },
    Cedar: { authz_config: { version: '1.0', type: 'cedarv1', cedar: { policies: CEDAR_POLICIES } } },
    'audit to file': { audit_config: { logFile: join(auditDir, `audit-${randomUUID()}.jsonl`) } },
    'tool filter': { tools_filter: ['echo', 'search', 'fetch'] },
    'OTel 0.1': { telemetry_config: { endpoint: otlpUrl, samplingRate: '0.1' } },
  };
}

/** The full stack's RunConfig fields: every policy of `policyConfigs` at once. */
export function fullStackConfig(configs: Record<PolicyName, object>): object {
  return Object.assign({}, ...Object.values(configs)) as object;
}

const RAW = 'streamable HTTP (Moat)';
const SDK = 'streamable HTTP, MCP SDK client and server (Moat)';
const FULL = 'full policy stack';
const BASELINE = `${FULL}, baseline build`;
const NONE_BASELINE = 'no policies, baseline build';
/** The minimal Node.js proxy's row for each kind of traffic (run.ts's first section uses the same paths). */
export const REFERENCE = {
  http: 'streamable HTTP (minimal Node.js proxy, reference)',
  sdk: 'streamable HTTP, MCP SDK client and server (minimal Node.js proxy, reference)',
} as const;

export async function policyCells(kit: BenchKit): Promise<PolicyBench> {
  const idp = await startJwksServer();
  const otlp = await kit.startOtlpSink();
  const auditDir = mkdtempSync(join(tmpdir(), 'moat-bench-audit-'));
  const baselineDist = process.env.MOAT_BENCH_BASELINE;
  const proxies: ProxyProcess[] = [];
  const stopProxies = () => Promise.all(proxies.splice(0).map((p) => p.stop()));
  const configs = () => policyConfigs(idp, otlp.url, auditDir);
  const full = () => fullStackConfig(configs());
  const auth = { headers: { authorization: `Bearer ${idp.token}` } };

  /** One kind of traffic: no policies, the full stack (and the baseline's), each policy alone. */
  const cells = async (
    target: 'http' | 'sdk',
    label: string,
    backendFile: string,
    onePolicyCells: boolean,
  ): Promise<Row[]> => {
    const backendUrl = await kit.startServer(backendFile);
    const proxied: Array<[string, object]> = [];
    const add = async (suffix: string, extra: object, withToken: boolean, dist?: string) => {
      const proxy = await kit.startProxy({ kind: 'http', url: backendUrl }, 'supervisor', extra, dist);
      proxies.push(proxy);
      proxied.push([`${label}${suffix}`, { target, url: proxy.url, ...(withToken ? auth : {}) }]);
    };
    await add('', {}, false);
    proxied.push([REFERENCE[target], { target, url: await kit.startServer('./pipe-proxy.ts', backendUrl) }]);
    await add(`, ${FULL}`, full(), true);
    if (baselineDist) {
      await add(`, ${BASELINE}`, full(), true, baselineDist);
      await add(`, ${NONE_BASELINE}`, {}, false, baselineDist);
    }
    if (onePolicyCells) {
      for (const policy of POLICIES) await add(`, ${policy} only`, configs()[policy], policy === 'JWT');
      if (baselineDist)
        for (const policy of OBSERVERS)
          await add(`, ${policy} only, baseline build`, configs()[policy], false, baselineDist);
    }
    const rows: Row[] = [];
    for (const concurrency of [1, 32])
      rows.push(...(await kit.compare(concurrency, { target, url: backendUrl }, proxied)));
    await stopProxies();
    return rows;
  };

  try {
    const rows = [
      ...(await cells('http', RAW, './backend-http.ts', true)),
      ...(await cells('sdk', SDK, './backend-sdk.ts', false)),
    ];
    return report(kit, rows, baselineDist !== undefined);
  } finally {
    await stopProxies();
    await Promise.all([idp.close(), otlp.close()]);
    rmSync(auditDir, { recursive: true, force: true });
  }
}

const fmt = (n: number, digits = 2) => n.toFixed(digits);
const throughput = (r: Row) => r.proxied.rps / r.direct.rps;

function report(kit: BenchKit, rows: Row[], withBaseline: boolean): PolicyBench {
  const cell = (path: string, concurrency: number) => {
    const row = rows.find((r) => r.path === path && r.concurrency === concurrency);
    if (!row) throw new Error(`no bench row ${path} at concurrency ${concurrency}`);
    return row;
  };
  const ratio = (path: string, c: number) => throughput(cell(path, c));
  const targets: TargetResult[] = [];
  const kinds = [
    { base: RAW, kind: 'raw', reference: REFERENCE.http, min: 0.45 },
    { base: SDK, kind: 'SDK', reference: REFERENCE.sdk, min: 0.75 },
  ] as const;
  for (const { base, kind, reference, min } of kinds) {
    const row = cell(`${base}, ${FULL}`, 32);
    targets.push({
      target: `full policy stack, ${kind}, concurrency 32: ≥ ${min}× direct`,
      measured: `${fmt(throughput(row), 3)}× (${fmt(row.proxied.rps, 0)} / ${fmt(row.direct.rps, 0)} req/s); no policies ${fmt(ratio(base, 32), 3)}×; minimal reference proxy ${fmt(ratio(reference, 32), 3)}×${withBaseline ? `; baseline build ${fmt(ratio(`${base}, ${BASELINE}`, 32), 3)}×` : ''}`,
      met: throughput(row) >= min,
    });
  }
  targets.push({
    target: 'no policies vs the minimal reference proxy, SDK, concurrency 32 (same rounds)',
    measured: `${fmt(ratio(SDK, 32) / ratio(REFERENCE.sdk, 32), 3)}× of the reference`,
    met: undefined,
  });
  for (const c of [1, 32]) {
    targets.push({
      target: `no policies vs the minimal reference proxy, raw, concurrency ${c} (same rounds)`,
      measured: `${fmt(ratio(RAW, c) / ratio(REFERENCE.http, c), 3)}× of the reference`,
      met: undefined,
    });
    if (withBaseline)
      targets.push({
        target: `no policies, raw, concurrency ${c}: this build vs the baseline build`,
        measured: `${fmt(ratio(RAW, c) / ratio(`${RAW}, ${NONE_BASELINE}`, c), 3)}× of the baseline build`,
        met: undefined,
      });
    targets.push({
      target: `OTel on (sampling 0.1) vs off, raw, concurrency ${c}`,
      measured: `${fmt(ratio(`${RAW}, OTel 0.1 only`, c) / ratio(RAW, c), 3)}× of telemetry off`,
      met: undefined,
    });
  }
  const lines = [
    ...kit.rowTable(rows),
    '',
    '| policy alone (raw) | c=1: ratio to no policies | c=32: ratio to no policies |',
    '|---|---|---|',
  ];
  for (const policy of POLICIES) {
    const at = (c: number) => fmt(ratio(`${RAW}, ${policy} only`, c) / ratio(RAW, c), 3);
    lines.push(`| ${policy} | ${at(1)}× | ${at(32)}× |`);
  }
  if (withBaseline)
    for (const policy of OBSERVERS) {
      const at = (c: number) =>
        fmt(ratio(`${RAW}, ${policy} only, baseline build`, c) / ratio(`${RAW}, ${NONE_BASELINE}`, c), 3);
      lines.push(`| ${policy}, baseline build (to its no policies) | ${at(1)}× | ${at(32)}× |`);
    }
  lines.push('', '| target | measured | |', '|---|---|---|');
  for (const t of targets)
    lines.push(
      `| ${t.target} | ${t.measured} | ${t.met === undefined ? '(no target)' : t.met ? 'met' : '**missed**'} |`,
    );
  return { rows, targets, lines };
}
