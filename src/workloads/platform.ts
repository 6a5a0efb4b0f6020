/**
 * The parts of other layers the workload layer drives: the container runtime, the container
 * spec builder and the proxy. Gathered here so the supervisor reads as a lifecycle, not as
 * wiring.
 */
import type { RemoteAuthStatus } from '../auth/outbound/index.js';
import { clientPath, clientTransport } from '../config/derived.js';
import type { RunConfig } from '../config/runconfig.js';
import type { RunningProxy as ListeningProxy } from '../proxy/index.js';
import type { BackendSpec } from '../proxy/types.js';
import { connectRuntime } from '../runtime/connect.js';
import { buildContainerSpec } from '../runtime/container-spec.js';
import type { ContainerRuntime, ContainerSpec } from '../runtime/types.js';

/** A listening proxy for one workload. */
export interface RunningProxy {
  /** The URL MCP clients use (the MCP endpoint, e.g. http://127.0.0.1:PORT/mcp). */
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface Platform {
  connectRuntime(): Promise<ContainerRuntime>;
  /** The container to create for a RunConfig, with the resolved environment. */
  containerSpec(config: RunConfig, env: Record<string, string>): ContainerSpec;
  startProxy(config: RunConfig, backend: BackendSpec, hooks?: ProxyHooks): Promise<RunningProxy>;
}

export interface ProxyHooks {
  /** Outbound OAuth state changes (e.g. the remote needs a new login). */
  onAuthStatus?: (status: RemoteAuthStatus) => void;
}

/**
 * The endpoint clients use: `/mcp` for streamable HTTP, `/sse` for the legacy SSE transport;
 * a remote workload keeps the remote URL's path (the proxy forwards every path there).
 */
export function clientUrl(config: RunConfig, base: string): string {
  return `${base}${clientPath(config)}`;
}

export const platform: Platform = {
  connectRuntime: () => connectRuntime(),
  containerSpec: (config, env) => buildContainerSpec(config, env),
  startProxy: async (config, backend, hooks = {}) => {
    // Loaded on demand: only a supervisor runs a proxy, and every other command starts faster without it.
    const [{ startProxy }, { createInboundSecurity }] = await Promise.all([
      import('../proxy/index.js'),
      import('../proxy/security.js'),
    ]);
    const security = await createInboundSecurity(config, {
      mcpPath: clientPath(config),
      transport: clientTransport(config),
    });
    let proxy: ListeningProxy;
    try {
      // Credentials for a remote server; a detached supervisor never opens a browser (moat run logged in).
      // Outbound auth (openid-client) is loaded only for a remote server: local ones never use it.
      const upstreamAuth =
        backend.kind === 'http' && backend.remote
          ? await (
              await import('../auth/outbound/workload.js')
            ).workloadUpstreamAuth(config, {
              interactive: process.env.MOAT_DETACHED !== '1',
              onStatus: hooks.onAuthStatus,
            })
          : undefined;
      proxy = await startProxy(config, backend, {
        middlewares: security.middlewares,
        policies: security.policies,
        routes: security.routes,
        upstreamAuth,
      });
    } catch (err) {
      await security.close();
      throw err;
    }
    return {
      url: clientUrl(config, proxy.url),
      port: proxy.port,
      close: async () => {
        await proxy.close();
        await security.close();
      },
    };
  },
};
