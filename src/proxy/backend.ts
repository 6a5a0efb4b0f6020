/** The backend of a remote workload, from its RunConfig (the same for `moat run <URL>` and `moat proxy`). */
import { clientTransport } from '../config/derived.js';
import type { RunConfig } from '../config/runconfig.js';
import { usageError } from '../util/errors.js';
import type { BackendSpec } from './types.js';

export function remoteBackend(
  config: Pick<RunConfig, 'remote_url' | 'transport' | 'proxy_mode'>,
): BackendSpec {
  if (config.remote_url === undefined) throw usageError('the run configuration has no remote_url');
  // The proxy does not translate between HTTP transports: it speaks the client's to the remote.
  return { kind: 'http', url: config.remote_url, transport: clientTransport(config), remote: true };
}
