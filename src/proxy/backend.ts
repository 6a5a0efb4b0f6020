/** The backend of a remote workload, from its RunConfig (the same for `moat run <URL>` and `moat proxy`). */
import type { RunConfig } from '../config/runconfig.js';
import { usageError } from '../util/errors.js';
import type { BackendSpec } from './types.js';

export function remoteBackend(config: Pick<RunConfig, 'remote_url' | 'transport'>): BackendSpec {
  if (config.remote_url === undefined) throw usageError('the run configuration has no remote_url');
  return {
    kind: 'http',
    url: config.remote_url,
    transport: config.transport === 'sse' ? 'sse' : 'streamable-http',
    remote: true,
  };
}
