/**
 * The hook through which other parts follow workload changes (registered clients' files, see
 * src/clients/sync.ts): a workload started, stopped or was removed. The layers above register a
 * listener; the lifecycle functions announce each change after it is recorded. A listener's
 * failure is reported as a warning: it never fails the change itself.
 */
import { errorMessage } from '../util/errors.js';
import { warnUser } from '../util/log.js';

export interface WorkloadChange {
  kind: 'running' | 'stopped' | 'removed';
  name: string;
}

export type WorkloadChangeListener = (change: WorkloadChange) => Promise<void>;

const listeners = new Set<WorkloadChangeListener>();

/** Registers a listener; returns the function that removes it. */
export function onWorkloadChange(listener: WorkloadChangeListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export async function announceWorkloadChange(change: WorkloadChange): Promise<void> {
  for (const listener of listeners) {
    try {
      await listener(change);
    } catch (err) {
      warnUser(`after ${change.kind} of "${change.name}": ${errorMessage(err)}`);
    }
  }
}
