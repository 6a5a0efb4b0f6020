/**
 * A dual-era stdio server (the conformance dual-era fixture: 2025 sessions with push-style input
 * tools, and the stateless 2026-07-28 revision) in a Podman container run by the real `moat`
 * binary: a 2025 client and a 2026-07-28 client each get the server's own answers through the
 * one workload. The 2025 session stays on the container's process (Moat's `initialize` picked
 * its era); the 2026 client is served by a second process of the server, an exec of the
 * container's own command inside the same container, started again when it dies, and stopped
 * with the workload (src/proxy/stdio/era-process.ts, src/runtime/docker/engine.ts `execStdio`).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleEntry } from '../../fixtures/bundle.js';
import { FIXTURE_DUAL_MAIN } from '../../fixtures/conformance/spawn.js';
import { buildNodeImage } from '../../support/images.js';
import { eventually, moat, moatOk, printedUrl, testMoatHome } from '../../support/moat-cli.js';
import { accept, sendModern } from '../../support/mrtr-client.js';
import { podmanCli, testRuntime, uniqueName } from '../../support/podman.js';

const IN_IMAGE = '/app/dual-era.mjs';
const home = testMoatHome();
let image: string;

/** The dual-era fixture bundled into one file on the minimal Node test image. */
async function dualEraImage(): Promise<string> {
  const fixtures = dirname(dirname(FIXTURE_DUAL_MAIN));
  const sources = [
    'conformance-dual/main.ts',
    'conformance-dual/input-tools.ts',
    'conformance-2026/server.ts',
    'conformance-2026/serving.ts',
    'conformance/server.ts',
    'conformance/era-tools.ts',
    'conformance/input-tools.ts',
    'conformance/http-serving.ts',
  ].map((file) => join(fixtures, file));
  const bundle = readFileSync(await bundleEntry(FIXTURE_DUAL_MAIN, sources, 'conformance-dual-fixture'));
  return buildNodeImage({ files: { [IN_IMAGE]: bundle } });
}

/** The processes running the server in the container (`podman top`: PID, then the command line). */
async function serverProcesses(name: string): Promise<string[]> {
  const top = await podmanCli(['top', name, 'pid', 'args']);
  return top.split('\n').filter((line) => line.includes(IN_IMAGE));
}

const pidOf = (line: string) => Number(line.trim().split(/\s+/)[0]);
const commandOf = (line: string) => line.trim().replace(/^\d+\s+/, '');

/** The 2026-07-28 tools/call with an input round, answered with `name`: the server's greeting. */
async function greet2026(url: string, name: string): Promise<{ keys: string[]; greeting: unknown }> {
  const first = await sendModern(url, 'tools/call', {
    name: 'test_input_required_result_elicitation',
    arguments: {},
  });
  expect(first.status).toBe(200);
  expect(first.answer.result?.resultType).toBe('input_required');
  const second = await sendModern(url, 'tools/call', {
    name: 'test_input_required_result_elicitation',
    arguments: {},
    inputResponses: { user_name: accept({ name }) },
    ...(first.answer.result?.requestState ? { requestState: first.answer.result.requestState } : {}),
  });
  return {
    keys: Object.keys(first.answer.result?.inputRequests ?? {}),
    greeting: second.answer.result?.content,
  };
}

/** A 2025-11-25 session (SDK v1) that answers elicitations; calls the push-style input tool. */
async function elicitThrough2025Session(url: string, answer: string): Promise<string> {
  const client = new Client({ name: 'era-2025', version: '1' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { response: answer } }));
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    const result = (await client.callTool({
      name: 'test_elicitation',
      arguments: { message: 'Who is there?' },
    })) as CallToolResult;
    const first = result.content[0];
    return first?.type === 'text' ? first.text : '';
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  image = await dualEraImage();
}, 300_000);

describe('a dual-era stdio server in a container, behind moat', { timeout: 300_000 }, () => {
  it('serves a 2025 session and a 2026-07-28 client natively, the second through an exec in the same container, restarted when it dies and stopped with it', async () => {
    const name = uniqueName('dual-era');
    const run = await moat(home, [
      'run',
      '--transport=stdio',
      `--name=${name}`,
      image,
      '--',
      IN_IMAGE,
      'stdio',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const url = printedUrl(run.stdout);
    try {
      // 2025: the server sends the client a real elicitation/create during tools/call.
      expect(await elicitThrough2025Session(url, 'from 2025')).toBe(
        'Elicitation completed: action=accept, content={"response":"from 2025"}',
      );
      expect(await serverProcesses(name)).toHaveLength(1);

      // 2026-07-28: the server's own input_required result, under its own key (the bridge would
      // have turned a 2025 elicitation into a key of Moat's, `elicitation-1`).
      expect(await greet2026(url, 'Ada')).toEqual({
        keys: ['user_name'],
        greeting: [{ type: 'text', text: 'Hello, Ada!' }],
      });
      const discovered = await sendModern(url, 'server/discover', {});
      expect(discovered.answer.result).toMatchObject({ supportedVersions: ['2026-07-28'] });

      // The 2026 client's process is a second one of the same command, exec'd in the container.
      const processes = await serverProcesses(name);
      expect(processes).toHaveLength(2);
      const execs = JSON.parse(await podmanCli(['inspect', '--format', '{{json .ExecIDs}}', name])) as
        string[] | null;
      expect(execs?.length ?? 0).toBeGreaterThan(0);
      // The same command line: the container's own Entrypoint and Cmd.
      expect(new Set(processes.map(commandOf)).size).toBe(1);

      // The 2026 process dies: a new exec takes its place, and 2026 clients are served again.
      const [main, era] = processes.map(pidOf).sort((a, b) => a - b);
      await podmanCli(['exec', name, '/usr/local/bin/node', '-e', `process.kill(${era}, 'SIGKILL')`]);
      const restarted = await eventually('a new 2026-07-28 process', async () => {
        const pids = (await serverProcesses(name)).map(pidOf);
        return pids.length === 2 && !pids.includes(era!) ? pids : undefined;
      });
      expect(restarted).toContain(main);
      expect(await greet2026(url, 'Bo')).toEqual({
        keys: ['user_name'],
        greeting: [{ type: 'text', text: 'Hello, Bo!' }],
      });

      // Both eras go on side by side.
      expect(await elicitThrough2025Session(url, 'again')).toBe(
        'Elicitation completed: action=accept, content={"response":"again"}',
      );
      expect(await moatOk(home, ['logs', '--proxy', name])).toContain('the stdio server is dual-era');

      // Stopped with the workload: the container, and so every process in it.
      expect(await moatOk(home, ['stop', name])).toContain(`Stopped ${name}`);
      const runtime = await testRuntime();
      expect((await runtime.inspectContainer(name))?.running).toBe(false);
      await expect(podmanCli(['top', name, 'args'])).rejects.toThrow();
    } finally {
      await moat(home, ['rm', name]);
    }
  });
});
