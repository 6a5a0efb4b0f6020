/**
 * Starts a workload from a complete, validated RunConfig: resolves the target, prepares the
 * image, creates the container (or none for a remote URL), starts the proxy and records state.
 */
import type { RunConfig } from '../config/runconfig.js';
import { notImplemented } from '../util/errors.js';
import type { CliIO } from '../util/io.js';

export interface RunRequest {
  /** The complete, validated RunConfig (from flags or --from-config). */
  config: RunConfig;
  /** -f/--foreground: block until the workload exits, then clean up. */
  foreground: boolean;
  /** The config came from --from-config. */
  fromConfig: boolean;
}

export function runWorkload(_request: RunRequest, _io: CliIO): Promise<void> {
  return Promise.reject(notImplemented('starting workloads'));
}
