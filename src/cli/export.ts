/** `moat export <name> <path>`: writes the saved RunConfig; `moat run --from-config <path>` brings it back. */
import { Command } from 'commander';
import type { CliIO } from '../util/io.js';
import { loadWorkload, unknownWorkload } from '../workloads/lifecycle.js';
import { WorkloadStore } from '../workloads/store.js';

export function exportCommand(io: CliIO): Command {
  return new Command('export')
    .description("Write a workload's run configuration to a file (re-run it with moat run --from-config)")
    .argument('<name>', 'Workload name')
    .argument('<path>', 'File to write')
    .action(async (name: string, path: string) => {
      const workload = await loadWorkload(new WorkloadStore(), name);
      if (!workload.config) throw unknownWorkload(name);
      // The schema library, loaded by the one command that needs it (`moat --help` builds them all).
      const [{ exportedRunConfig }, { writeRunConfigFile }] = await Promise.all([
        import('../config/runconfig.js'),
        import('../config/runconfig-file.js'),
      ]);
      await writeRunConfigFile(path, exportedRunConfig(workload.config));
      io.stdout.write(`Exported the run configuration of "${name}" to ${path}\n`);
    });
}
