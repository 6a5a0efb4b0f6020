/**
 * The parts of other layers the workload layer drives: the container runtime, the container
 * spec builder and the proxy. Gathered here so the supervisor reads as a lifecycle, not as
 * wiring.
 */
import type { RunConfig } from '../config/runconfig.js';
import type { BackendSpec } from '../proxy/types.js';
import type { ContainerRuntime, ContainerSpec } from '../runtime/types.js';
import { notImplemented } from '../util/errors.js';

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
  startProxy(config: RunConfig, backend: BackendSpec): Promise<RunningProxy>;
}

export const platform: Platform = {
  connectRuntime: () => Promise.reject(notImplemented('the container runtime')),
  containerSpec: () => {
    throw notImplemented('container specs');
  },
  startProxy: () => Promise.reject(notImplemented('the proxy')),
};
