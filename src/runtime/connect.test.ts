import { describe, expect, it } from 'vitest';
import { connectRuntime, runtimeEndpoints } from './connect.js';

describe('runtimeEndpoints', () => {
  it('tries only MOAT_RUNTIME_SOCKET when it is set (a bare path is a unix socket)', () => {
    expect(runtimeEndpoints({ MOAT_RUNTIME_SOCKET: '/x.sock', DOCKER_HOST: 'tcp://h:1' })).toEqual([
      { origin: 'MOAT_RUNTIME_SOCKET', endpoint: 'unix:///x.sock', explicit: true },
    ]);
  });

  it('tries only DOCKER_HOST when it is set', () => {
    expect(runtimeEndpoints({ DOCKER_HOST: 'tcp://127.0.0.1:2375' })).toEqual([
      { origin: 'DOCKER_HOST', endpoint: 'tcp://127.0.0.1:2375', explicit: true },
    ]);
  });

  it('otherwise tries rootful Podman, rootless Podman, Docker, Docker Desktop in order', () => {
    expect(runtimeEndpoints({ XDG_RUNTIME_DIR: '/run/user/1000' }, '/home/u').map((e) => e.endpoint)).toEqual(
      [
        'unix:///run/podman/podman.sock',
        'unix:///run/user/1000/podman/podman.sock',
        'unix:///var/run/docker.sock',
        'unix:///home/u/.docker/run/docker.sock',
      ],
    );
  });
});

describe('connectRuntime errors', () => {
  it('rejects an endpoint scheme it cannot use as a usage error', async () => {
    await expect(connectRuntime({ MOAT_RUNTIME_SOCKET: 'ssh://host' })).rejects.toMatchObject({
      kind: 'usage',
      message: /unsupported runtime endpoint ssh:\/\/host/,
    });
  });
});
