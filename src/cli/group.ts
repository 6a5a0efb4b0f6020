/**
 * `moat group create|list|rm|serve`: groups organise workloads (`moat run --group g`, `moat list
 * --group g`, `moat stop --group g`). `default` exists implicitly; other groups are created
 * explicitly so a typo in --group fails instead of silently making a new group. `serve` is
 * group-serve.ts.
 */
import { Command } from 'commander';
import { DEFAULTS } from '../config/defaults.js';
import { usageError } from '../util/errors.js';
import type { CliIO } from '../util/io.js';
import { workloadsInGroup } from '../workloads/select.js';
import { assertValidName } from '../workloads/names.js';
import { WorkloadStore } from '../workloads/store.js';
import { groupServeCommand } from './group-serve.js';

export function groupCommand(io: CliIO): Command {
  const group = new Command('group').description('Manage workload groups');
  group
    .command('create')
    .description('Create a group')
    .argument('<name>', 'Group name')
    .action(async (name: string) => {
      assertValidName(name, 'group name');
      if (!(await new WorkloadStore().createGroup(name))) throw usageError(`group "${name}" already exists`);
      io.stdout.write(`Created group ${name}\n`);
    });
  group
    .command('list')
    .alias('ls')
    .description('List groups')
    .action(async () => {
      const store = new WorkloadStore();
      await store.createGroup(DEFAULTS.group);
      for (const name of await store.groupNames()) io.stdout.write(`${name}\n`);
    });
  group
    .command('rm')
    .description('Remove an empty group')
    .argument('<name>', 'Group name')
    .action(async (name: string) => {
      const store = new WorkloadStore();
      assertValidName(name, 'group name');
      if (name === DEFAULTS.group) throw usageError('the default group cannot be removed');
      if (!(await store.readGroup(name))) throw usageError(`group "${name}" does not exist`);
      const members = await workloadsInGroup(store, name);
      if (members.length > 0) {
        throw usageError(
          `group "${name}" still has workloads (${members.join(', ')}); remove them first with "moat rm --group ${name}"`,
        );
      }
      await store.deleteGroup(name);
      io.stdout.write(`Removed group ${name}\n`);
    });
  group.addCommand(groupServeCommand(io));
  return group;
}
