/**
 * One reconcile pass, pure: validate, then (only if every blocking check passed and the proxy is
 * not being deleted) build the desired objects. The controller applies them and then calls
 * `computeStatus` with the result.
 */
import { errorMessage } from '../../util/errors.js';
import type { OperatorOptions, ProxyInputs } from './inputs.js';
import { desiredObjects, type DesiredObjects } from './objects.js';
import { validateProxy, type CheckResult } from './validate.js';

export interface ReconcilePlan {
  checks: CheckResult[];
  /** Absent when a blocking check is not True, when deleting, or when the build failed. */
  desired?: DesiredObjects;
  /** Why the objects could not be built although the checks passed (pass it to computeStatus). */
  buildError?: string;
}

export function planProxy(inputs: ProxyInputs, options: OperatorOptions): ReconcilePlan {
  const checks = validateProxy(inputs);
  if (inputs.proxy.metadata.deletionTimestamp) return { checks };
  if (checks.some((c) => c.blocking && c.status !== 'True')) return { checks };
  try {
    return { checks, desired: desiredObjects(inputs, options) };
  } catch (err) {
    return { checks, buildError: errorMessage(err) };
  }
}
