/**
 * Outbound authentication for a workload, as the workload layer uses it: the secrets provider is
 * opened from the environment (a detached supervisor gets the password from its parent), and the
 * status hook receives the re-authentication state for the workload's status file.
 */
import type { RunConfig } from '../../config/runconfig.js';
import { openSecretsProvider } from '../../secrets/manager.js';
import type { SecretsProvider } from '../../secrets/types.js';
import { deleteFlagSecrets } from '../../secrets/refs.js';
import { usesSecrets } from '../../secrets/workload.js';
import { errorMessage } from '../../util/errors.js';
import { log } from '../../util/log.js';
import type { RemoteAuthStatus } from './upstream-auth.js';
import { remoteOAuthRequested } from './oauth-settings.js';
import type { UpstreamAuth } from './types.js';

/**
 * The upstream auth module, loaded when a workload's auth is made or forgotten: it brings the
 * OAuth client (openid-client, jose), which `moat run` of a workload without OAuth does without.
 */
const upstreamAuth = () => import('./upstream-auth.js');

export interface WorkloadAuthOptions {
  /** May a browser login start (foreground runs, or the terminal before detaching)? */
  interactive: boolean;
  onStatus?: (status: RemoteAuthStatus) => void;
  /** Where the login URL is shown (default stderr). */
  notify?: (message: string) => void;
  secrets?: SecretsProvider;
}

/** The UpstreamAuth for the workload's proxy; undefined when it configures none. */
export async function workloadUpstreamAuth(
  config: RunConfig,
  options: WorkloadAuthOptions,
): Promise<UpstreamAuth | undefined> {
  const { createUpstreamAuth } = await upstreamAuth();
  return createUpstreamAuth(config, {
    secrets: options.secrets ?? (await openSecretsProvider()),
    interactive: options.interactive,
    // In a terminal's foreground, dead tokens start one new login by themselves.
    autoLogin: options.interactive,
    onStatus: options.onStatus,
    notify: options.notify,
  });
}

/**
 * Logs in to the remote now (in the terminal, before a detached supervisor starts) when the
 * workload uses OAuth and has no usable stored token; the supervisor then finds the tokens.
 */
export async function loginBeforeDetach(
  config: RunConfig,
  secrets: SecretsProvider,
  notify?: (message: string) => void,
): Promise<void> {
  if (!remoteOAuthRequested(config)) return;
  const { createUpstreamAuth } = await upstreamAuth();
  await createUpstreamAuth(config, { secrets, interactive: true, notify });
}

/**
 * Deletes what a removed workload owned in the secrets manager (flag-value secrets, OAuth tokens;
 * client registrations stay with their issuer). Skipped for workloads that never used secrets; a
 * provider that cannot be opened (no password here) is reported, not fatal.
 */
export async function forgetWorkloadSecrets(config: RunConfig, secrets?: SecretsProvider): Promise<void> {
  if (!usesSecrets(config)) return;
  try {
    const provider = secrets ?? (await openSecretsProvider());
    await deleteFlagSecrets(provider, config.name);
    await (await upstreamAuth()).forgetRemoteAuth(provider, config.name);
  } catch (err) {
    log().warn(
      { workload: config.name, err: errorMessage(err) },
      'could not delete the secrets this workload stored (flag values, OAuth tokens)',
    );
  }
}
