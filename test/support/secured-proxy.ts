/** The proxy with the inbound security its RunConfig asks for, wired the way workloads do it. */
import type { Logger } from 'pino';
import type { RunConfig } from '../../src/config/runconfig.js';
import { startProxy, type RunningProxy } from '../../src/proxy/index.js';
import { createInboundSecurity } from '../../src/proxy/security.js';
import type { BackendSpec } from '../../src/proxy/types.js';

export interface SecuredProxy {
  proxy: RunningProxy;
  close(): Promise<void>;
}

export async function startSecuredProxy(
  config: RunConfig,
  backend: BackendSpec,
  logger: Logger,
  transport: 'streamable-http' | 'sse' = 'streamable-http',
): Promise<SecuredProxy> {
  const security = await createInboundSecurity(config, {
    mcpPath: transport === 'sse' ? '/sse' : '/mcp',
    transport,
    logger,
  });
  try {
    const proxy = await startProxy(config, backend, {
      logger,
      middlewares: security.middlewares,
      policies: security.policies,
      routes: security.routes,
    });
    return {
      proxy,
      close: async () => {
        await proxy.close();
        await security.close();
      },
    };
  } catch (err) {
    await security.close();
    throw err;
  }
}
