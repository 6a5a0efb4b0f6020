/**
 * The Cedar authorization config of a proxy, from whichever of its three sources the spec uses:
 * `authzConfig.inline`, `authzConfig.configMap` (a ConfigMap holding a ToolHive/Moat authz file) or
 * `authzConfigRef` (an MCPAuthzConfig). The claim-mapping fields of `authzConfig` override the
 * ConfigMap's. The policies are checked by the real Cedar engine (src/authz).
 */
import { CedarAuthorizer } from '../../authz/cedar.js';
import { parseAuthzConfig, type AuthzConfig } from '../../authz/config.js';
import { errorMessage } from '../../util/errors.js';
import type { MCPAuthzConfigSpec } from '../crd/index.js';
import { configHash } from './hash.js';
import type { ProxyInputs } from './inputs.js';

export type AuthzResolution =
  | { ok: true; config: AuthzConfig }
  | { ok: false; reason: 'AuthzConfigMapNotFound' | 'AuthzConfigInvalid'; message: string };

type CedarFields = Pick<MCPAuthzConfigSpec, 'groupClaimName' | 'roleClaimName' | 'groupEntityType'>;

function claimFields(fields: CedarFields): Partial<AuthzConfig['cedar']> {
  return {
    ...(fields.groupClaimName ? { group_claim_name: fields.groupClaimName } : {}),
    ...(fields.roleClaimName ? { role_claim_name: fields.roleClaimName } : {}),
    ...(fields.groupEntityType ? { group_entity_type: fields.groupEntityType } : {}),
  };
}

function cedarConfig(policies: string[], entitiesJson: string, fields: CedarFields): AuthzConfig {
  return {
    version: '1.0',
    type: 'cedarv1',
    cedar: { policies, entities_json: entitiesJson, ...claimFields(fields) },
  };
}

/**
 * Undefined when the proxy has no authorization. Needs the referenced MCPAuthzConfig to be present
 * when `authzConfigRef` is used (validation reports it otherwise).
 */
export function resolveAuthz(inputs: ProxyInputs): AuthzResolution | undefined {
  const { spec } = inputs.proxy;
  if (spec.authzConfigRef) {
    const ref = inputs.authzConfig?.spec;
    if (!ref) return undefined;
    return { ok: true, config: cedarConfig(ref.policies, ref.entitiesJson, ref) };
  }
  const authz = spec.authzConfig;
  if (!authz) return undefined;
  if (authz.type === 'inline' && authz.inline) {
    return { ok: true, config: cedarConfig(authz.inline.policies, authz.inline.entitiesJson, authz) };
  }
  if (authz.type === 'configMap' && authz.configMap) {
    const { name, key } = authz.configMap;
    const found = inputs.configMaps[name];
    if (!found) {
      return {
        ok: false,
        reason: 'AuthzConfigMapNotFound',
        message: `spec.authzConfig.configMap: ConfigMap ${name} not found in namespace ${inputs.proxy.metadata.namespace ?? ''}`,
      };
    }
    const text = found.data[key];
    if (text === undefined) {
      return {
        ok: false,
        reason: 'AuthzConfigInvalid',
        message: `spec.authzConfig.configMap: ConfigMap ${name} has no key ${key}`,
      };
    }
    try {
      const parsed = parseAuthzConfig(text, `ConfigMap ${name} key ${key}`).config;
      return { ok: true, config: { ...parsed, cedar: { ...parsed.cedar, ...claimFields(authz) } } };
    } catch (err) {
      return { ok: false, reason: 'AuthzConfigInvalid', message: errorMessage(err) };
    }
  }
  return undefined;
}

/**
 * Verdicts by config hash. Each CedarAuthorizer keeps its parsed policy set inside the Cedar
 * engine for good, and every reconcile validates again, so a config is checked once and the
 * number of kept sets is bounded by the number of distinct configs (capped).
 */
const verdicts = new Map<string, string | undefined>();
const MAX_VERDICTS = 256;

/** Undefined when the Cedar engine accepts the policies and static entities; else its message. */
export function cedarProblem(config: AuthzConfig, source: string): string | undefined {
  const key = configHash({ config, source });
  if (verdicts.has(key)) return verdicts.get(key);
  let problem: string | undefined;
  try {
    new CedarAuthorizer(config, { source, lines: [] });
  } catch (err) {
    problem = errorMessage(err);
  }
  if (verdicts.size >= MAX_VERDICTS) verdicts.delete(verdicts.keys().next().value as string);
  verdicts.set(key, problem);
  return problem;
}
