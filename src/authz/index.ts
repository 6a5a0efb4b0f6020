/** Authorization from a RunConfig: the Cedar policy for the message pipeline, when configured. */
import type { RunConfig } from '../config/runconfig.js';
import { usageError } from '../util/errors.js';
import { log } from '../util/log.js';
import { CedarAuthorizer } from './cedar.js';
import { loadAuthzConfigFile, validateAuthzConfig, type LoadedAuthzConfig } from './config.js';
import { createAuthzPolicy } from './policy.js';
import type { MessagePolicy } from '../mcp/policy.js';
import type { MemberResolver } from '../mcp/members.js';

export interface Authz {
  policy: MessagePolicy;
  /** Claim names authentication must use to fill Identity.groups. */
  groupClaimName?: string;
  roleClaimName?: string;
}

export async function loadAuthz(
  config: Pick<RunConfig, 'authz_config' | 'authz_config_path' | 'authz_argument_mapping'>,
  memberOf?: MemberResolver,
): Promise<Authz | undefined> {
  if (config.authz_config !== undefined && config.authz_config_path !== undefined) {
    throw usageError('authz_config and authz_config_path are mutually exclusive; keep one of them');
  }
  let loaded: LoadedAuthzConfig;
  if (config.authz_config_path !== undefined) {
    loaded = await loadAuthzConfigFile(config.authz_config_path);
  } else if (config.authz_config !== undefined) {
    const source = 'RunConfig authz_config';
    loaded = { config: validateAuthzConfig(config.authz_config, source), locations: { source, lines: [] } };
  } else {
    return undefined;
  }
  if (loaded.config.cedar.primary_upstream_provider !== undefined) {
    log().warn(
      { source: loaded.locations.source },
      'cedar.primary_upstream_provider has no effect in moat (there is no embedded authorization server); ignoring it',
    );
  }
  const authorizer = new CedarAuthorizer(
    loaded.config,
    loaded.locations,
    config.authz_argument_mapping ?? 'strict',
  );
  return {
    policy: createAuthzPolicy(authorizer, memberOf),
    groupClaimName: loaded.config.cedar.group_claim_name,
    roleClaimName: loaded.config.cedar.role_claim_name,
  };
}
