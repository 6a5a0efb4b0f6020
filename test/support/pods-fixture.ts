/**
 * What every pod test file shares: the operator, in a container of its image, watching a
 * fresh namespace; a real MCP server on the host as the remote; cleanups run in reverse order;
 * and the operator's pods played from the API server (test/support/pods.ts).
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { startV1StreamableBackend, type HttpBackendServer } from './mcp-http-backends.js';
import { moatOperatorImage, moatProxyImage } from './moat-image.js';
import { startOperatorContainer, type OperatorContainer } from './pods-operator.js';
import { playProxyPods, readOperatorOutput, type PlayedProxy } from './pods.js';
import { freePort } from './ports.js';
import { INIT_BODY, post } from './proxy-harness.js';

/**
 * The remote's host name in the resources: the operator refuses loopback addresses in
 * `remoteUrl`, and the pod maps this name back to the host's loopback with `hostAliases`.
 */
export const REMOTE_HOST = 'remote-mcp.pods.test';

export interface PodTestEnvironment {
  readonly operator: OperatorContainer;
  readonly namespace: string;
  readonly backend: HttpBackendServer;
  /** Runs `cleanup` in afterAll, before the operator stops (last registered runs first). */
  onCleanup(cleanup: () => Promise<void>): void;
  /** The spec fields pointing a proxy at the backend through REMOTE_HOST, plus `spec`. */
  proxySpec(spec?: Record<string, unknown>): Record<string, unknown>;
  /** Plays the operator's Deployment for proxy `name` as pods (one port per replica); removed in afterAll. */
  play(name: string, replicas?: number): Promise<PlayedProxy>;
}

/** Registers beforeAll/afterAll for a pod test file; the fields are set once beforeAll ran. */
export function usePodTestEnvironment(prefix: string, workDir: string): PodTestEnvironment {
  let operator: OperatorContainer | undefined;
  let backend: HttpBackendServer | undefined;
  const cleanups: Array<() => Promise<void>> = [];
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the pod test environment is used before beforeAll ran');
    return value;
  };
  beforeAll(async () => {
    [operator, backend] = await Promise.all([
      Promise.all([moatOperatorImage(), moatProxyImage()]).then(([operatorImage, proxyImage]) =>
        startOperatorContainer(prefix, { operator: operatorImage, proxy: proxyImage }, workDir),
      ),
      startV1StreamableBackend({ json: true }),
    ]);
  }, 240_000);
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await operator?.stop();
    await backend?.close();
  }, 120_000);
  const environment: PodTestEnvironment = {
    get operator() {
      return ready(operator);
    },
    get namespace() {
      return ready(operator).namespace;
    },
    get backend() {
      return ready(backend);
    },
    onCleanup: (cleanup) => cleanups.push(cleanup),
    proxySpec: (spec = {}) => {
      const remote = new URL(ready(backend).url);
      return {
        remoteUrl: `http://${REMOTE_HOST}:${remote.port}${remote.pathname}`,
        podTemplateSpec: { spec: { hostAliases: [{ ip: '127.0.0.1', hostnames: [REMOTE_HOST] }] } },
        ...spec,
      };
    },
    play: async (name, replicas = 1) => {
      const output = await readOperatorOutput(environment.namespace, name);
      // The operator names the proxy image it was given (not its own) for the proxy pods.
      expect(output.deployment.spec?.template.spec?.containers[0]?.image).toBe(ready(operator).images.proxy);
      const ports = await Promise.all(Array.from({ length: replicas }, () => freePort()));
      const played = await playProxyPods(output, { ports, workDir });
      cleanups.push(() => played.down());
      return played;
    },
  };
  return environment;
}

/** MCP headers of one session. */
export function sessionHeaders(sessionId: string): Record<string, string> {
  return { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
}

/** Initializes a session at `url` (the pod's /mcp) and returns the headers that use it. */
export async function initializeSession(
  url: string,
  headers: Record<string, string> = {},
): Promise<Record<string, string>> {
  const init = await post(url, INIT_BODY, headers);
  expect(init.status, init.text).toBe(200);
  const id = init.headers.get('mcp-session-id') ?? '';
  expect(id).not.toBe('');
  return { ...headers, ...sessionHeaders(id) };
}

/** A JSON-RPC `tools/call` of the backend's `add` tool. */
export function addCall(id: number, a: number, b: number): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'add', arguments: { a, b } } };
}
