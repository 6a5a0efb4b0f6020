/**
 * The Engine API client (src/runtime/docker/api.ts) against real Podman: status and message of
 * error answers (in plain calls and in streams), label filters in the query, a tar upload, and
 * the hijacked attach carrying exactly what is written (no request body leaks into stdin).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { EngineApi, EngineApiError, segment } from '../../../src/runtime/docker/api.js';
import { tarStream } from '../../../src/runtime/egress/tar.js';
import { nodeBaseImage } from '../../support/images.js';
import { podmanSocket, uniqueName } from '../../support/podman.js';

const api = new EngineApi({ socketPath: podmanSocket() });
const containers: string[] = [];
const images: string[] = [];

afterAll(async () => {
  for (const id of containers)
    await api.json('DELETE', `/containers/${id}`, { query: { force: true } }).catch(() => undefined);
  for (const ref of images)
    await api.json('DELETE', `/images/${segment(ref)}`, { query: { force: true } }).catch(() => undefined);
});

async function create(name: string, body: object): Promise<string> {
  const { Id } = await api.json<{ Id: string }>('POST', '/containers/create', { query: { name }, body });
  containers.push(Id);
  return Id;
}

describe('EngineApi on Podman', () => {
  it('answers ping and version', async () => {
    expect(await api.json('GET', '/_ping', { timeoutMs: 5_000 })).toBe('OK');
    const version = await api.json<{ Components: Array<{ Name: string }> }>('GET', '/version');
    expect(version.Components.some((c) => /podman/i.test(c.Name))).toBe(true);
  });

  it("rejects an error answer with its HTTP status and the engine's own message", async () => {
    const missing = uniqueName('moat-no-such-image');
    const err = await api.json('GET', `/images/${missing}/json`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineApiError);
    expect(err).toMatchObject({ statusCode: 404 });
    expect((err as Error).message).toMatch(/no such image|image not known/i);
    expect((err as Error).message).toContain(missing);
    expect((err as Error).message).not.toMatch(/^\{|HTTP/);
  });

  it('rejects a streamed call that fails before streaming the same way', async () => {
    const err = await api
      .stream('GET', '/containers/moat-no-such-container/logs', { query: { stdout: true } })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ statusCode: 404, message: expect.stringMatching(/no such container/i) });
  });

  it('filters by label with a JSON-encoded query', async () => {
    const image = await nodeBaseImage();
    const mark = uniqueName('mark');
    const tagged = await create(uniqueName('moat-api'), { Image: image, Labels: { 'moat-api-test': mark } });
    await create(uniqueName('moat-api'), { Image: image, Labels: { 'moat-api-test': 'other' } });
    const listed = await api.json<Array<{ Id: string }>>('GET', '/containers/json', {
      query: { all: true, filters: { label: [`moat-api-test=${mark}`] } },
    });
    expect(listed.map((c) => c.Id)).toEqual([tagged]);
  });

  it('uploads a tar body (image import) and reads the progress stream', async () => {
    const tar = tarStream([{ type: 'file', path: 'hello.txt', mode: 0o644, content: Buffer.from('hi\n') }]);
    const progress = await api.stream('POST', '/images/create', {
      query: { fromSrc: '-', changes: ['USER 65534:65534', 'ENTRYPOINT ["/nothing"]'] },
      body: tar,
    });
    let output = '';
    for await (const chunk of progress) output += String(chunk);
    const id = /"(?:id|status)"\s*:\s*"(sha256:[0-9a-f]{64})"/.exec(output)?.[1];
    expect(id, output).toBeDefined();
    const repo = `localhost/${uniqueName('moat-api-import')}`;
    await api.json('POST', `/images/${id}/tag`, { query: { repo, tag: 't1' } });
    images.push(`${repo}:t1`);
    const inspected = await api.json<{ Id: string; Config: { User: string; Entrypoint: string[] } }>(
      'GET',
      `/images/${segment(`${repo}:t1`)}/json`,
    );
    expect(`sha256:${inspected.Id.replace(/^sha256:/, '')}`).toBe(id);
    expect(inspected.Config).toMatchObject({ User: '65534:65534', Entrypoint: ['/nothing'] });
  });

  it('hijacks the attach connection and delivers exactly the bytes written (empty request body)', async () => {
    const id = await create(uniqueName('moat-api'), {
      Image: await nodeBaseImage(),
      Cmd: ['-e', 'process.stdin.pipe(process.stdout)'],
      OpenStdin: true,
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
    });
    const socket = await api.hijack(`/containers/${id}/attach`, {
      stream: true,
      stdin: true,
      stdout: true,
      stderr: true,
    });
    await api.json('POST', `/containers/${id}/start`);
    let received = Buffer.alloc(0);
    const line = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n';
    const framed = new Promise<void>((resolve) =>
      socket.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        if (received.length >= 8 + Buffer.byteLength(line)) resolve();
      }),
    );
    socket.write(line);
    await framed;
    // One stdout frame (type 1) holding exactly the line: nothing preceded it on stdin.
    expect(received[0]).toBe(1);
    expect(received.readUInt32BE(4)).toBe(Buffer.byteLength(line));
    expect(received.subarray(8).toString()).toBe(line);
    socket.destroy();
  });
});
