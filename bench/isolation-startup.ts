/**
 * What network isolation costs at start: wall time of `moat run` (detached, until it prints
 * "running") for the same stdio and streamable-HTTP servers with isolation (the default: egress
 * proxy and relay containers and their volume) and with `--isolate-network=false`, alternating,
 * each workload removed before the next. `node --import tsx bench/isolation-startup.ts` (needs
 * Podman; builds dist/ first with `npm run build`). Runs on its own Podman API service and
 * MOAT_HOME (bench/moat-on-podman.ts). Prints a Markdown table of medians.
 */
import { testServerImage } from '../test/support/images.js';
import { withMoatOnPodman, type MoatCli } from './moat-on-podman.js';

const ROUNDS = 5;

/** Seconds from `moat run` to "running", then the workload is removed (not timed). */
async function timedRun(moat: MoatCli, name: string, args: string[]): Promise<number> {
  const start = process.hrtime.bigint();
  await moat(['run', '--name', name, ...args]);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await moat(['rm', name]);
  return seconds;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

await withMoatOnPodman(async (moat) => {
  const cases = [
    { what: 'stdio', args: ['--transport', 'stdio', await testServerImage('stdio-server')] },
    {
      what: 'streamable-http',
      args: ['--transport', 'streamable-http', await testServerImage('http-server')],
    },
  ];
  const rows: string[] = [];
  for (const { what, args } of cases) {
    // One untimed isolated run first: it builds the egress image once per Node binary.
    await timedRun(moat, `bench-warm-${process.pid}`, args);
    const isolated: number[] = [];
    const open: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      isolated.push(await timedRun(moat, `bench-iso-${process.pid}-${round}`, args));
      open.push(
        await timedRun(moat, `bench-open-${process.pid}-${round}`, ['--isolate-network=false', ...args]),
      );
    }
    const [a, b] = [median(isolated), median(open)];
    rows.push(`| ${what} | ${a.toFixed(2)} s | ${b.toFixed(2)} s | +${(a - b).toFixed(2)} s |`);
  }
  process.stdout.write(
    [
      `\`moat run\` until it reports running, median of ${ROUNDS} runs each (Node ${process.version}, Podman):`,
      '',
      '| transport | isolated (default) | --isolate-network=false | isolation costs |',
      '|---|---|---|---|',
      ...rows,
      '',
    ].join('\n'),
  );
});
