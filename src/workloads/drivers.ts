/**
 * The parts of other layers the workload layer drives: the container runtime, the container
 * spec builder and the proxy. Gathered here so the supervisor reads as a lifecycle, not as
 * wiring.
 */
import type { RemoteAuthStatus } from '../auth/outbound/remote-oauth.js';
import type { RunConfig } from '../config/runconfig.js';
import type { RunningProxy } from '../proxy/index.js';
import type { BackendSpec } from '../proxy/types.js';
import { buildContainerSpec } from '../runtime/container-spec.js';
import { withIgnoreOverlays } from '../runtime/overlays.js';
import type { ContainerRuntime, ContainerSpec } from '../runtime/types.js';
import { startIdleMemoryReducer } from '../util/idle-memory.js';

export type { RunningProxy } from '../proxy/index.js';

export interface Drivers {
  connectRuntime(): Promise<ContainerRuntime>;
  /** The container to create for a RunConfig, with the resolved environment and ignored paths hidden. */
  containerSpec(config: RunConfig, env: Record<string, string>): ContainerSpec;
  startProxy(config: RunConfig, backend: BackendSpec, hooks?: ProxyHooks): Promise<RunningProxy>;
}

export interface ProxyHooks {
  /** Outbound OAuth state changes (e.g. the remote needs a new login). */
  onAuthStatus?: (status: RemoteAuthStatus) => void;
}

export const drivers: Drivers = {
  // Loaded on demand: the engine client (and its egress image builder) only when a command needs it.
  connectRuntime: async () => (await import('../runtime/connect.js')).connectRuntime(),
  containerSpec: (config, env) => withIgnoreOverlays(buildContainerSpec(config, env), config.ignore_config),
  startProxy: async (config, backend, hooks = {}) => {
    // Loaded on demand: only a supervisor runs a proxy, and every other command starts faster without it.
    const { startProxy } = await import('../proxy/index.js');
    const proxy = await startProxy(config, backend, {
      // A detached supervisor never opens a browser (moat run logged in before detaching).
      interactiveAuth: process.env.MOAT_DETACHED !== '1',
      ...(hooks.onAuthStatus ? { onAuthStatus: hooks.onAuthStatus } : {}),
    });
    // The supervisor lives as long as its workload: what a load made V8 commit goes back when it is quiet.
    const stopReducer = startIdleMemoryReducer();
    return {
      ...proxy,
      close: () => {
        stopReducer();
        return proxy.close();
      },
    };
  },
};
