/**
 * The ToolHive peer section of `npm run bench` (opt-in: `MOAT_BENCH_PEER=toolhive`; alone with
 * `MOAT_BENCH_ONLY=peer`): Moat and ToolHive v0.47.0 side by side in front of the same backends,
 * each with the same policy stack — OIDC JWT validation (an RS256 token against a JWKS on loopback),
 * Cedar (bench/policies.ts's policy set), audit to a file, a tool filter of `echo` — and neither
 * with telemetry.
 *
 * - ToolHive is `thv-proxyrunner` (the proxy process of its Kubernetes pods: a RunConfig in, its
 *   transparent proxy with the middleware out, no container for a `remote_url`), built once per
 *   machine by scripts/toolhive.sh from the Go module proxy. It will not start without a container
 *   runtime, so it gets a Podman API service of its own (test/support/podman.ts) it never runs a
 *   container on.
 * - Moat is `moat proxy --config` as its proxy image runs it: scripts/bundle-proxy.ts's bundle,
 *   with the launch settings the operator gives its pods (src/util/proxy-launch.ts).
 * - Before any load, every policy is checked to enforce on both: no token → 401; a Cedar forbid →
 *   403; a tool outside the filter → a JSON-RPC error, not the backend's answer; the permitted
 *   call → the backend's answer; one audit record at least.
 * - Cells (run.ts's `compare`, interleaved rounds, medians): raw JSON-RPC at concurrency 1 and 32,
 *   the MCP SDK client and server at 32. CPU per request is each proxy's user+system time (from
 *   /proc) over the raw cells divided by the requests it served (warm-ups included); RSS is
 *   VmRSS from /proc, read the same way for both (no forced GC), idle and after the raw cells.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { bundleProxy, PROXY_BUNDLE_DIR, PROXY_ENTRY } from '../scripts/bundle-proxy.js';
import { cpuSeconds } from './proxy-launcher.js';
import { proxyContainerEnv } from '../src/util/proxy-launch.js';
import { startPodmanApi } from '../test/support/podman.js';
import type { BenchKit, Row } from './bench-types.js';
import { CEDAR_POLICIES, oidcConfigFor, startJwksServer } from './policies.js';
import { freePort } from './supergateway.js';

export const TOOLHIVE_VERSION = 'v0.47.0';
const BINARY = join(
  process.env.XDG_CACHE_HOME || join(homedir(), '.cache'),
  'moat-test',
  'toolhive',
  TOOLHIVE_VERSION,
  'thv-proxyrunner',
);
const SCRIPT = fileURLToPath(new URL('../scripts/toolhive.sh', import.meta.url));
const READY_TIMEOUT_MS = 60_000;

export const MOAT_PATH = 'streamable HTTP (Moat, moat proxy), full stack without telemetry';
export const TOOLHIVE_PATH = `streamable HTTP (ToolHive ${TOOLHIVE_VERSION} thv-proxyrunner), full stack without telemetry`;
const SDK_MOAT_PATH =
  'streamable HTTP, MCP SDK client and server (Moat, moat proxy), full stack without telemetry';
const SDK_TOOLHIVE_PATH = `streamable HTTP, MCP SDK client and server (ToolHive ${TOOLHIVE_VERSION}), full stack without telemetry`;

interface PeerProcess {
  name: string;
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** The policy stack in the RunConfig shape both read (ToolHive's field names; Moat reads them too). */
function policyFields(idp: { issuer: string; jwksUrl: string }, auditFile: string): object {
  return {
    oidc_config: oidcConfigFor(idp),
    authz_config: {
      version: '1.0',
      type: 'cedarv1',
      // bench/policies.ts's set names Moat's group type; ToolHive takes the type as a setting.
      cedar: { policies: CEDAR_POLICIES, entities_json: '[]', group_entity_type: 'MoatGroup' },
    },
    audit_config: { component: 'bench', logFile: auditFile },
    tools_filter: ['echo'],
  };
}

/** Starts `command` and waits (bounded) until GET /health on `port` answers 200. */
async function startPeer(
  name: string,
  command: string[],
  port: number,
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<PeerProcess> {
  const child: ChildProcess = spawn(command[0]!, command.slice(1), {
    ...options,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await Promise.race([once(child, 'exit'), sleep(10_000)]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`${name} exited (${child.exitCode}) before it was ready:\n${stderr}`);
    const ok = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) }).then(
      async (res) => (await res.arrayBuffer(), res.status === 200),
      () => false,
    );
    if (ok) return { name, url: `http://127.0.0.1:${port}/mcp`, pid: child.pid!, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${name} did not answer /health within ${READY_TIMEOUT_MS / 1000} s:\n${stderr}`);
    }
    await sleep(200);
  }
}

/** `moat proxy --config` from the proxy image's bundle, with the pods' launch settings. */
async function startMoat(
  bundle: string,
  dir: string,
  backendUrl: string,
  policies: object,
): Promise<PeerProcess> {
  const port = await freePort();
  const config = join(dir, `moat-${port}.json`);
  writeFileSync(config, remoteRunConfig(backendUrl, port, policies));
  const entry = join(bundle, PROXY_BUNDLE_DIR, PROXY_ENTRY);
  return startPeer('Moat', [process.execPath, entry, 'proxy', '--config', config], port, {
    cwd: dir,
    env: { ...process.env, ...proxyContainerEnv(), HOME: dir, MOAT_SECRETS_PROVIDER: 'environment' },
  });
}

/** The RunConfig both proxies read: the backend as a remote URL, the policy stack on top. */
function remoteRunConfig(backendUrl: string, port: number, policies: object): string {
  return JSON.stringify({
    schema_version: 'v0.1.0',
    name: 'bench',
    image: backendUrl,
    remote_url: backendUrl,
    transport: 'streamable-http',
    proxy_mode: 'streamable-http',
    host: '127.0.0.1',
    port,
    ...policies,
  });
}

/**
 * thv-proxyrunner in a folder of its own: it reads ./runconfig.json (as in its pods, /etc/runconfig/).
 * It connects a container runtime before anything else, even for a `remote_url` it runs no
 * container for: in its pods the Kubernetes API, here the Podman API on `podmanSocket`.
 */
async function startToolHive(
  dir: string,
  backendUrl: string,
  policies: object,
  podmanSocket: string,
): Promise<PeerProcess> {
  const port = await freePort();
  const cwd = join(dir, `toolhive-${port}`);
  mkdirSync(cwd);
  writeFileSync(join(cwd, 'runconfig.json'), remoteRunConfig(backendUrl, port, policies));
  return startPeer('ToolHive', [BINARY, 'run', '--foreground=true', backendUrl], port, {
    cwd,
    env: {
      ...process.env,
      HOME: cwd,
      XDG_CONFIG_HOME: cwd,
      XDG_STATE_HOME: cwd,
      XDG_DATA_HOME: cwd,
      TOOLHIVE_PODMAN_SOCKET: podmanSocket,
    },
  });
}

interface Answer {
  status: number;
  body: string;
  session: string | null;
}

async function post(url: string, body: object, headers: Record<string, string>): Promise<Answer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, body: await res.text(), session: res.headers.get('mcp-session-id') };
}

/** Checks every policy of the stack on `peer`; throws naming the first that does not enforce. */
async function verifyEnforcement(peer: PeerProcess, token: string, auditDir: string): Promise<void> {
  const fail = (what: string, answer: Answer) => {
    throw new Error(`${peer.name}: ${what} (HTTP ${answer.status}: ${answer.body.slice(0, 300)})`);
  };
  const auth = { authorization: `Bearer ${token}` };
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
  };
  const anonymous = await post(peer.url, init, {});
  if (anonymous.status !== 401) fail('a request without a token is not refused with 401', anonymous);
  const initialized = await post(peer.url, init, auth);
  if (initialized.status !== 200) fail('initialize with a valid token failed', initialized);
  const headers = {
    ...auth,
    'mcp-protocol-version': '2025-11-25',
    ...(initialized.session ? { 'mcp-session-id': initialized.session } : {}),
  };
  const call = (id: number, name: string, args: object) =>
    post(peer.url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }, headers);
  const permitted = await call(2, 'echo', { text: 'hello' });
  if (permitted.status !== 200 || !permitted.body.includes('"result"'))
    fail('the permitted call failed', permitted);
  const forbidden = await call(3, 'echo', { path: '/etc/passwd' });
  if (forbidden.status !== 403) fail('the Cedar forbid on arg_path "/etc/*" was not answered 403', forbidden);
  const filtered = await call(4, 'search', { q: 'x' });
  if (filtered.body.includes('"result"') || !filtered.body.includes('"error"'))
    fail('a tool outside the filter reached the backend', filtered);
  const records = readdirSync(auditDir)
    .filter((f) => f.startsWith(peer.name))
    .map((f) => readFileSync(join(auditDir, f), 'utf8'))
    .join('');
  if (!/tools\/call|tool_call/.test(records))
    throw new Error(`${peer.name}: no audit record of the tool calls`);
}

function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
  return kb / 1024;
}

/** Builds ToolHive once per machine (scripts/toolhive.sh; minutes the first time). */
function ensureToolHive(): void {
  const result = spawnSync('bash', [SCRIPT], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`scripts/toolhive.sh failed (exit ${result.status})`);
}

export interface PeerSection {
  rows: Row[];
  lines: string[];
}

export async function toolhiveSection(kit: BenchKit): Promise<PeerSection> {
  ensureToolHive();
  const dir = mkdtempSync(join(tmpdir(), 'moat-bench-peer-'));
  const auditDir = join(dir, 'audit');
  mkdirSync(auditDir);
  const idp = await startJwksServer();
  const podman = await startPodmanApi();
  const peers: PeerProcess[] = [];
  try {
    const bundle = join(dir, 'moat-proxy');
    await bundleProxy(bundle);
    const fields = (who: string) => policyFields(idp, join(auditDir, `${who}-${peers.length}.jsonl`));
    const backendUrl = await kit.startServer('./backend-http.ts');
    const sdkBackendUrl = await kit.startServer('./backend-sdk.ts');
    const start = async (who: 'Moat' | 'ToolHive', url: string) => {
      const peer =
        who === 'Moat'
          ? await startMoat(bundle, dir, url, fields(who))
          : await startToolHive(dir, url, fields(who), podman.socketPath);
      peers.push(peer);
      return peer;
    };
    const moat = await start('Moat', backendUrl);
    const toolhive = await start('ToolHive', backendUrl);
    for (const peer of [moat, toolhive]) await verifyEnforcement(peer, idp.token, auditDir);
    const auth = { headers: { authorization: `Bearer ${idp.token}` } };
    const idle = [moat, toolhive].map((p) => rssMb(p.pid));
    const cpuBefore = [moat, toolhive].map((p) => cpuSeconds(p.pid));
    const raw: Row[] = [];
    for (const concurrency of [1, 32])
      raw.push(
        ...(await kit.compare(concurrency, { target: 'http', url: backendUrl }, [
          [MOAT_PATH, { target: 'http', url: moat.url, ...auth }],
          [TOOLHIVE_PATH, { target: 'http', url: toolhive.url, ...auth }],
        ])),
      );
    const cpu = [moat, toolhive].map((p, i) => cpuSeconds(p.pid) - cpuBefore[i]!);
    const after = [moat, toolhive].map((p) => rssMb(p.pid));
    const served = [MOAT_PATH, TOOLHIVE_PATH].map((path) =>
      raw.filter((r) => r.path === path).reduce((n, r) => n + r.proxied.requests + kit.warmups(r), 0),
    );
    const sdkMoat = await start('Moat', sdkBackendUrl);
    const sdkToolHive = await start('ToolHive', sdkBackendUrl);
    const sdk = await kit.compare(32, { target: 'sdk', url: sdkBackendUrl }, [
      [SDK_MOAT_PATH, { target: 'sdk', url: sdkMoat.url, ...auth }],
      [SDK_TOOLHIVE_PATH, { target: 'sdk', url: sdkToolHive.url, ...auth }],
    ]);
    const rows = [...raw, ...sdk];
    const cell = (path: string, c: number) => rows.find((r) => r.path === path && r.concurrency === c)!;
    const rps = (moatPath: string, thvPath: string, c: number) =>
      cell(moatPath, c).proxied.rps / cell(thvPath, c).proxied.rps;
    const cpuUs = cpu.map((seconds, i) => (seconds / served[i]!) * 1e6);
    const f = (x: number, d = 2) => x.toFixed(d);
    const lines = [
      `ToolHive ${TOOLHIVE_VERSION} (thv-proxyrunner) and Moat (\`moat proxy\`, the proxy image's bundle) in front of the same backends, each with OIDC RS256 JWT validation, Cedar, audit to a file and the tool filter \`echo\`; every policy checked to enforce on both before the load.`,
      '',
      ...kit.rowTable(rows),
      '',
      '| Moat / ToolHive, full stack | raw c=1 | raw c=32 | SDK c=32 | p50 c=1 | CPU per request | RSS idle → after load |',
      '|---|---|---|---|---|---|---|',
      `| ratio | ${f(rps(MOAT_PATH, TOOLHIVE_PATH, 1))}× | ${f(rps(MOAT_PATH, TOOLHIVE_PATH, 32))}× | ${f(rps(SDK_MOAT_PATH, SDK_TOOLHIVE_PATH, 32))}× | ${f(cell(MOAT_PATH, 1).proxied.p50Ms / cell(TOOLHIVE_PATH, 1).proxied.p50Ms)}× | ${f(cpuUs[0]! / cpuUs[1]!)}× (${f(cpuUs[0]!, 0)} µs vs ${f(cpuUs[1]!, 0)} µs) | **${f(idle[0]!, 1)} → ${f(after[0]!, 1)} MB vs ${f(idle[1]!, 1)} → ${f(after[1]!, 1)} MB** |`,
    ];
    return { rows, lines };
  } finally {
    for (const peer of peers) await peer.stop();
    await idp.close();
    await podman.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
