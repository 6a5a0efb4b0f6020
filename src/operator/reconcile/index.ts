/** The operator's pure reconcile core for MCPRemoteProxy: inputs in, desired objects and status out. */
export type { FoundConfigMap, FoundSecret, OperatorOptions, ProxyInputs } from './inputs.js';
export {
  referencedConfigMapNames,
  referencedObjects,
  referencedSecretNames,
  type ReferencedNames,
} from './references.js';
export { planProxy, type ReconcilePlan } from './plan.js';
export { validateProxy, CONDITION, type CheckResult, type ConditionStatus } from './validate.js';
export { desiredObjects, type DesiredObjects } from './objects.js';
export { buildRunConfig } from './runconfig.js';
export {
  computeStatus,
  OVERRIDES_IGNORED,
  type ProxyEvent,
  type StatusInputs,
  type StatusResult,
} from './status.js';
export { checkRemoteUrl, type RemoteUrlRules } from './remote-url.js';
export { canonicalJson, configHash } from './hash.js';
export {
  proxyLabels,
  proxyObjectNames,
  proxyServiceUrl,
  selectorLabels,
  type ProxyObjectNames,
} from './names.js';
export { RUNCONFIG_CHECKSUM, SECRETS_CHECKSUM, PROXY_UID } from './deployment.js';
export { PROXY_CONTAINER } from './merge.js';
