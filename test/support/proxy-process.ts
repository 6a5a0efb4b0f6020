/**
 * Runs one proxy in its own process, for tests with several proxies sharing state (Redis).
 * Input: env MOAT_TEST_PROXY = JSON {config, backend}; the backend must be an HTTP one.
 * Output: the proxy URL on the first stdout line. SIGTERM closes it.
 */
import { runConfigSchema } from '../../src/config/runconfig.js';
import { startProxy } from '../../src/proxy/index.js';
import type { BackendSpec } from '../../src/proxy/types.js';
import { createLogger } from '../../src/util/log.js';

const input = JSON.parse(process.env.MOAT_TEST_PROXY ?? '{}') as { config: unknown; backend: BackendSpec };
const proxy = await startProxy(runConfigSchema.parse(input.config), input.backend, {
  logger: createLogger(false),
});
process.stdout.write(`${proxy.url}\n`);
process.once('SIGTERM', () => {
  void proxy.close().then(() => process.exit(0));
});
