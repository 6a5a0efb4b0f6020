/**
 * The shape stop, rm, start and restart share: `moat <command> <name...> | --all | --group g`,
 * then one action per chosen workload (a failure is reported and the rest still run).
 */
import { Command } from 'commander';
import type { ContainerRuntime } from '../runtime/types.js';
import type { CliIO } from '../util/io.js';
import { forEachWorkload, lazyRuntime } from '../workloads/lifecycle.js';
import { selectWorkloads, type Selection } from '../workloads/select.js';
import { WorkloadStore } from '../workloads/store.js';

/** The command with its selection argument and options; `verb` is how help says the action. */
export function workloadSelectionCommand(command: string, verb: string, description: string): Command {
  const title = `${verb.charAt(0).toUpperCase()}${verb.slice(1)}`;
  return new Command(command)
    .description(description)
    .argument('[names...]', `Workloads to ${verb}`)
    .option('-a, --all', `${title} all workloads`, false)
    .option('-g, --group <group>', `${title} the workloads in this group`);
}

/** Runs `act` on each workload the selection names, in turn, sharing one store and runtime. */
export async function forSelectedWorkloads(
  io: CliIO,
  command: string,
  selection: Selection,
  act: (store: WorkloadStore, name: string, runtime: () => Promise<ContainerRuntime>) => Promise<void>,
): Promise<void> {
  const store = new WorkloadStore();
  const selected = await selectWorkloads(store, command, selection);
  const runtime = lazyRuntime();
  await forEachWorkload(selected, io.stderr, (name) => act(store, name, runtime));
}
