/** Which workloads a multi-workload command (stop, start, rm) acts on: names, --all or --group. */
import { usageError } from '../util/errors.js';
import { loadWorkload } from './lifecycle.js';
import { groupOf } from '../config/derived.js';
import { type WorkloadStore } from './store.js';

export interface Selection {
  names: string[];
  all?: boolean;
  group?: string;
}

export async function selectWorkloads(
  store: WorkloadStore,
  command: string,
  selection: Selection,
): Promise<string[]> {
  const { names, all, group } = selection;
  if ((all || group) && names.length > 0) {
    throw usageError(
      `give workload names or --all/--group, not both (moat ${command} <name...> | --all | --group <g>)`,
    );
  }
  if (all && group) throw usageError('give --all or --group, not both');
  if (!all && !group) {
    if (names.length === 0)
      throw usageError(`name at least one workload, or use --all or --group (moat ${command} <name...>)`);
    return names;
  }
  const known = await store.workloadNames();
  if (all) return known;
  if (group && !(await store.readGroup(group)))
    throw usageError(`group "${group}" does not exist ("moat group list" shows the groups)`);
  return workloadsInGroup(store, group as string, known);
}

/** The workloads of a group; one whose config cannot be read counts as in the default group. */
export async function workloadsInGroup(
  store: WorkloadStore,
  group: string,
  known?: readonly string[],
): Promise<string[]> {
  const members: string[] = [];
  for (const name of known ?? (await store.workloadNames())) {
    const workload = await loadWorkload(store, name).catch(() => undefined);
    if (groupOf(workload?.config) === group) members.push(name);
  }
  return members;
}
