/**
 * The proxy's status from what the reconciler knows: the validation results, an apply error, the
 * observed Deployment and whether a finalizer is cleaning up. Also the Events a transition emits.
 *
 * Phases: Terminating while deleting; Failed on a blocking check or an apply error (with the
 * reason); Pending while a reference is not validated yet or the Deployment is not available;
 * Ready once it is. `url` is recomputed every time (ToolHive set it once and kept a stale port),
 * and `lastTransitionTime` moves only when a condition's status changes.
 */
import type { V1Deployment } from '@kubernetes/client-node';
import type {
  Condition,
  ConfigStatus,
  CustomResource,
  MCPRemoteProxyStatus,
  ProxyPhase,
} from '../crd/index.js';
import type { ProxyInputs } from './inputs.js';
import { configHash } from './hash.js';
import { proxyServiceUrl } from './names.js';
import { CONDITION, type CheckResult } from './validate.js';

export interface StatusInputs {
  inputs: ProxyInputs;
  checks: CheckResult[];
  /** The message of an error while building or applying the objects. */
  applyError?: string;
  /** The Deployment as the API server returned it (its status tells availability). */
  deployment?: V1Deployment;
  /** User fields of resourceOverrides/podTemplateSpec that were not applied. */
  ignored?: string[];
  now: Date;
}

export interface ProxyEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface StatusResult {
  status: MCPRemoteProxyStatus;
  events: ProxyEvent[];
}

interface Verdict {
  phase: ProxyPhase;
  message: string;
  ready: Pick<Condition, 'status' | 'reason' | 'message'>;
}

export function computeStatus(args: StatusInputs): StatusResult {
  const { inputs, now } = args;
  const { proxy } = inputs;
  const previous = proxy.status;
  const generation = proxy.metadata.generation ?? 0;
  const url = proxyServiceUrl(
    proxy.metadata.name ?? '',
    proxy.metadata.namespace ?? '',
    proxy.spec.proxyPort,
  );
  const verdict = decide(args, url);

  const results: Array<Pick<Condition, 'type' | 'status' | 'reason' | 'message'>> = [
    { type: CONDITION.ready, ...verdict.ready },
    ...args.checks.map(({ type, status, reason, message }) => ({ type, status, reason, message })),
  ];
  if (args.ignored && args.ignored.length > 0) {
    results.push({
      type: OVERRIDES_IGNORED,
      status: 'True',
      reason: 'OverridesIgnored',
      message: `not applied, to keep the proxy pod hardened and its contract intact: ${args.ignored.join(', ')}`,
    });
  }
  const before = new Map((previous?.conditions ?? []).map((c) => [c.type, c]));
  const conditions: Condition[] = results.map((c) => {
    const old = before.get(c.type);
    const lastTransitionTime = old && old.status === c.status ? old.lastTransitionTime : now.toISOString();
    return { ...c, message: c.message.slice(0, 32768), lastTransitionTime, observedGeneration: generation };
  });

  const externalUrl = proxy.spec.oidcConfigRef?.resourceUrl;
  const status: MCPRemoteProxyStatus = {
    phase: verdict.phase,
    message: verdict.message,
    url,
    ...(externalUrl ? { externalUrl } : {}),
    observedGeneration: generation,
    conditions,
    ...hashes(inputs),
  };
  return { status, events: events(previous, status, args.checks, before) };
}

/** Advisory condition listing user fields the merge refused. */
export const OVERRIDES_IGNORED = 'OverridesIgnored';

function decide(args: StatusInputs, url: string): Verdict {
  const { proxy } = args.inputs;
  if (proxy.metadata.deletionTimestamp) {
    const message = 'the proxy is being deleted; its objects are being removed';
    return { phase: 'Terminating', message, ready: { status: 'False', reason: 'Terminating', message } };
  }
  const failed = args.checks.find((c) => c.blocking && c.status === 'False');
  if (failed) {
    return {
      phase: 'Failed',
      message: failed.message,
      ready: { status: 'False', reason: 'ValidationFailed', message: `${failed.type}: ${failed.message}` },
    };
  }
  if (args.applyError !== undefined) {
    const message = `the proxy's objects could not be applied: ${args.applyError}`;
    return { phase: 'Failed', message, ready: { status: 'False', reason: 'ApplyFailed', message } };
  }
  const waiting = args.checks.find((c) => c.blocking && c.status !== 'True');
  if (waiting) {
    return {
      phase: 'Pending',
      message: waiting.message,
      ready: { status: 'False', reason: 'WaitingForReferences', message: waiting.message },
    };
  }
  const availability = deploymentAvailability(args.deployment, proxy.spec.replicas);
  if (!availability.available) {
    return {
      phase: 'Pending',
      message: availability.message,
      ready: { status: 'False', reason: 'DeploymentNotReady', message: availability.message },
    };
  }
  const message = `the proxy serves ${url}`;
  return { phase: 'Ready', message, ready: { status: 'True', reason: 'DeploymentAvailable', message } };
}

/** Available: the Deployment controller saw the current template and at least one pod is available. */
function deploymentAvailability(
  deployment: V1Deployment | undefined,
  replicas: number | undefined,
): { available: boolean; message: string } {
  if (!deployment) return { available: false, message: 'the Deployment does not exist yet' };
  if (replicas === 0) return { available: false, message: 'spec.replicas is 0: no proxy pod runs' };
  const status = deployment.status;
  const generation = deployment.metadata?.generation ?? 0;
  if ((status?.observedGeneration ?? 0) < generation) {
    return { available: false, message: 'the Deployment controller has not processed the latest change yet' };
  }
  const available = status?.availableReplicas ?? 0;
  const wanted = deployment.spec?.replicas ?? 1;
  if (available < 1) return { available: false, message: `0 of ${wanted} proxy pods are available` };
  return { available: true, message: `${available} of ${wanted} proxy pods are available` };
}

type ConfigObject = CustomResource<unknown, ConfigStatus> | undefined;

/** Its controller's configHash, else a hash of the spec (a new object not yet processed). */
function hashOf(object: ConfigObject): string | undefined {
  if (!object) return undefined;
  return object.status?.configHash ?? configHash(object.spec);
}

function hashes(inputs: ProxyInputs): Partial<MCPRemoteProxyStatus> {
  const { spec } = inputs.proxy;
  const entries: Array<[keyof MCPRemoteProxyStatus, ConfigObject | undefined]> = [
    ['authServerConfigHash', spec.authServerRef && inputs.authServerConfig],
    ['authzConfigHash', spec.authzConfigRef && inputs.authzConfig],
    ['externalAuthConfigHash', spec.externalAuthConfigRef && inputs.externalAuthConfig],
    ['oidcConfigHash', spec.oidcConfigRef && inputs.oidcConfig],
    ['telemetryConfigHash', spec.telemetryConfigRef && inputs.telemetryConfig],
    ['toolConfigHash', spec.toolConfigRef && inputs.toolConfig],
  ];
  const out: Record<string, string> = {};
  for (const [field, object] of entries) {
    const hash = hashOf(object);
    if (hash !== undefined) out[field] = hash;
  }
  return out;
}

/** A condition in a state the user should hear about. */
function isTrouble(condition: Pick<Condition, 'type' | 'status'>, check: CheckResult | undefined): boolean {
  if (condition.type === CONDITION.ready) return false;
  if (!check) return condition.status === 'True'; // OverridesIgnored
  if (check.blocking) return check.status === 'False';
  // Advisory: warnings are True, the Redis CA is trouble when not found.
  return check.type === CONDITION.redisCa ? check.status === 'False' : check.status === 'True';
}

function events(
  previous: MCPRemoteProxyStatus | undefined,
  status: MCPRemoteProxyStatus,
  checks: CheckResult[],
  before: Map<string, Condition>,
): ProxyEvent[] {
  const out: ProxyEvent[] = [];
  const byType = new Map(checks.map((c) => [c.type, c]));
  for (const condition of status.conditions ?? []) {
    const old = before.get(condition.type);
    const changed = !old || old.status !== condition.status || old.reason !== condition.reason;
    if (changed && isTrouble(condition, byType.get(condition.type))) {
      out.push({ type: 'Warning', reason: condition.reason, message: condition.message });
    }
  }
  if (previous?.phase !== status.phase) {
    const phase = status.phase ?? 'Pending';
    out.push({
      type: phase === 'Failed' ? 'Warning' : 'Normal',
      reason: PHASE_REASONS[phase],
      message: status.message ?? '',
    });
  }
  return out;
}

const PHASE_REASONS: Record<ProxyPhase, string> = {
  Pending: 'ProxyPending',
  Ready: 'ProxyReady',
  Failed: 'ProxyFailed',
  Terminating: 'ProxyTerminating',
};
