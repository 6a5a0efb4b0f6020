/** A stdio MCP server in a real Podman container: attach, JSON-RPC round trip, stderr, lifecycle. */
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../../src/runtime/types.js';
import { callText } from '../../fixtures/pipes-client.js';
import { nodeBaseImage } from '../../support/images.js';
import { Harness } from './harness.js';

let harness: Harness;
beforeAll(async () => {
  harness = await Harness.create();
});
afterAll(async () => {
  await harness.cleanup();
});

describe('stdio attach through Podman', () => {
  it('round-trips JSON-RPC with a clean first message and keeps stderr out of stdout', async () => {
    const { client, transport, id } = await harness.launch();
    expect(client.getServerVersion()?.name).toBe('moat-test-stdio');
    expect(await callText(client, 'echo', { text: 'héllo {"json"}\nline' })).toBe('héllo {"json"}\nline');
    // The first bytes on stdout are the initialize response: the attach options did not leak
    // into stdin (Podman would otherwise echo a parse error or the options first).
    expect(transport!.received.startsWith('{"result":{"protocolVersion"')).toBe(true);
    expect(transport!.received).not.toContain('moat-test-stdio: ready');
    const logs = await text(await harness.runtime.logs(id));
    expect(logs).toContain('moat-test-stdio: ready');
  });

  it('reports state, labels, exit code and removal', async () => {
    const { id, spec } = await harness.launch({
      group: 'rt-tests',
      container_labels: { purpose: 'lifecycle' },
    });
    const running = await harness.runtime.inspectContainer(spec.name);
    expect(running).toMatchObject({ id, name: spec.name, state: 'running', running: true });
    expect(running!.labels).toMatchObject({
      [LABELS.managed]: 'true',
      [LABELS.name]: spec.name,
      [LABELS.transport]: 'stdio',
      [LABELS.group]: 'rt-tests',
      purpose: 'lifecycle',
    });

    const listed = await harness.runtime.listContainers({ [LABELS.name]: spec.name });
    expect(listed.map((c) => c.id)).toEqual([id]);

    const exited = harness.runtime.waitContainer(id);
    await harness.runtime.stopContainer(id, 10);
    // The fixture exits 0 on SIGTERM (it handles the signal as PID 1).
    expect(await exited).toBe(0);
    expect(await harness.runtime.inspectContainer(id)).toMatchObject({
      state: 'exited',
      running: false,
      exitCode: 0,
    });

    await harness.runtime.removeContainer(id);
    expect(await harness.runtime.inspectContainer(id)).toBeUndefined();
    expect(await harness.runtime.listContainers({ [LABELS.name]: spec.name })).toEqual([]);
    // Removing again, stopping a removed container: not errors.
    await harness.runtime.removeContainer(id);
    await harness.runtime.stopContainer(id);
  });

  it('names an existing container name as a clear error', async () => {
    const { spec } = await harness.launch();
    await expect(harness.runtime.createContainer(spec)).rejects.toMatchObject({
      kind: 'runtime',
      message: expect.stringContaining(`a container named ${spec.name} already exists`),
    });
  });
});

describe('raw attach', () => {
  it('delivers exactly the bytes written to stdin (no attach options leak in)', async () => {
    const { id, spec } = await harness.createOnly({
      image: await nodeBaseImage(),
      cmd_args: ['-e', 'process.stdin.pipe(process.stdout)'],
    });
    expect(spec.attachStdio).toBe(true);
    const pipes = await harness.runtime.attachStdio(id);
    await harness.runtime.startContainer(id);
    const line = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n';
    pipes.stdin.write(line);
    const first = await new Promise<string>((resolve) => {
      let seen = '';
      pipes.stdout.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('\n')) resolve(seen);
      });
    });
    expect(first).toBe(line);
    pipes.close();
  });

  it('closing the attachment ends the server stdin (Podman), so one attachment serves one run', async () => {
    const { id } = await harness.createOnly({
      image: await nodeBaseImage(),
      cmd_args: ['-e', "process.stdin.pipe(process.stdout); process.stdin.on('end', () => process.exit(7))"],
    });
    const pipes = await harness.runtime.attachStdio(id);
    await harness.runtime.startContainer(id);
    pipes.stdin.write('one\n');
    expect(await firstLine(pipes.stdout)).toBe('one\n');
    const exited = harness.runtime.waitContainer(id);
    pipes.close();
    // The server saw EOF on stdin and exited with its own code.
    expect(await exited).toBe(7);
  });

  it('ends stdout when the server exits', async () => {
    const { id } = await harness.createOnly({
      image: await nodeBaseImage(),
      cmd_args: ['-e', 'process.stdin.pipe(process.stdout)'],
    });
    const pipes = await harness.runtime.attachStdio(id);
    await harness.runtime.startContainer(id);
    pipes.stdin.write('two\n');
    expect(await firstLine(pipes.stdout)).toBe('two\n');
    const ended = new Promise<void>((resolve) => pipes.stdout.once('end', resolve));
    pipes.stdout.resume();
    await harness.runtime.stopContainer(id, 5);
    await ended;
  });
});

describe('wait', () => {
  it('reports the exit code of a container that exited before the wait began', async () => {
    const { id } = await harness.createOnly({
      image: await nodeBaseImage(),
      cmd_args: ['-e', 'process.exit(3)'],
    });
    await harness.runtime.startContainer(id);
    while ((await harness.runtime.inspectContainer(id))?.state !== 'exited')
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await harness.runtime.waitContainer(id)).toBe(3);
  });
});

describe('logs', () => {
  it('follows stdout and stderr until the container exits', async () => {
    const { id } = await harness.createOnly({
      image: await nodeBaseImage(),
      cmd_args: [
        '-e',
        "console.log('out 1'); console.error('err 1'); setTimeout(() => { console.log('out 2'); }, 1500);",
      ],
      transport: 'stdio',
    });
    await harness.runtime.startContainer(id);
    const followed = await text(await harness.runtime.logs(id, { follow: true }));
    expect(followed.split('\n').filter(Boolean).sort()).toEqual(['err 1', 'out 1', 'out 2']);
    expect(await harness.runtime.waitContainer(id)).toBe(0);
    expect(await text(await harness.runtime.logs(id, { stderr: false }))).toBe('out 1\nout 2\n');
    expect(await text(await harness.runtime.logs(id, { tail: 1, stderr: false }))).toBe('out 2\n');
  });
});

function firstLine(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve) => {
    let seen = '';
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString();
      if (seen.includes('\n')) {
        stream.off('data', onData);
        resolve(seen);
      }
    };
    stream.on('data', onData);
  });
}
