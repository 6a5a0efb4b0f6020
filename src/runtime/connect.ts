/**
 * Finds a container runtime that answers the Docker Engine API. An explicit setting
 * (MOAT_RUNTIME_SOCKET, else DOCKER_HOST) is the only place tried, so Moat never silently uses
 * a different engine than the one the user pointed at; without one, the well-known sockets are
 * tried in order: rootful Podman, rootless Podman, Docker, Docker Desktop.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { errorMessage, runtimeError, usageError } from '../util/errors.js';
import { EngineApi } from './docker/api.js';
import { EngineRuntime } from './docker/engine.js';
import type { ContainerRuntime, RuntimeInfo } from './types.js';

export interface RuntimeEndpoint {
  /** Where the setting came from, for messages: `MOAT_RUNTIME_SOCKET`, `rootful Podman`, ... */
  origin: string;
  /** `unix:///path` or `tcp://host:port`. */
  endpoint: string;
  /** An explicit setting: tried alone, even when it fails. */
  explicit: boolean;
}

/** The places to try, in order. Pure: depends only on `env` and the home directory. */
export function runtimeEndpoints(
  env: NodeJS.ProcessEnv,
  home: string = env.HOME ?? homedir(),
): RuntimeEndpoint[] {
  const explicit = env.MOAT_RUNTIME_SOCKET?.trim();
  if (explicit) return [{ origin: 'MOAT_RUNTIME_SOCKET', endpoint: toEndpoint(explicit), explicit: true }];
  const dockerHost = env.DOCKER_HOST?.trim();
  if (dockerHost) return [{ origin: 'DOCKER_HOST', endpoint: toEndpoint(dockerHost), explicit: true }];
  const found: RuntimeEndpoint[] = [
    { origin: 'rootful Podman', endpoint: 'unix:///run/podman/podman.sock', explicit: false },
  ];
  if (env.XDG_RUNTIME_DIR)
    found.push({
      origin: 'rootless Podman',
      endpoint: `unix://${join(env.XDG_RUNTIME_DIR, 'podman/podman.sock')}`,
      explicit: false,
    });
  found.push(
    { origin: 'Docker', endpoint: 'unix:///var/run/docker.sock', explicit: false },
    {
      origin: 'Docker Desktop',
      endpoint: `unix://${join(home, '.docker/run/docker.sock')}`,
      explicit: false,
    },
  );
  return found;
}

/** A bare path means a unix socket. */
function toEndpoint(value: string): string {
  return value.startsWith('/') ? `unix://${value}` : value;
}

/** A client for the endpoint; TLS on `https://` or DOCKER_TLS_VERIFY, as the docker CLI does. */
function engineApiFor(endpoint: string, env: NodeJS.ProcessEnv): EngineApi {
  if (endpoint.startsWith('unix://')) return new EngineApi({ socketPath: endpoint.slice('unix://'.length) });
  if (endpoint.startsWith('tcp://') || endpoint.startsWith('http://') || endpoint.startsWith('https://')) {
    const url = new URL(endpoint.replace(/^tcp:/, 'http:'));
    const tls = endpoint.startsWith('https://') || /^(1|true)$/i.test(env.DOCKER_TLS_VERIFY ?? '');
    const certDir = env.DOCKER_CERT_PATH || join(env.HOME ?? homedir(), '.docker');
    return new EngineApi({
      host: url.hostname.replace(/^\[(.*)\]$/, '$1'), // an IPv6 literal without its URL brackets
      port: Number(url.port) || (tls ? 2376 : 2375),
      ...(tls
        ? {
            tls: {
              ca: readFileSync(join(certDir, 'ca.pem')),
              cert: readFileSync(join(certDir, 'cert.pem')),
              key: readFileSync(join(certDir, 'key.pem')),
            },
          }
        : {}),
    });
  }
  throw usageError(
    `unsupported runtime endpoint ${endpoint}: use a socket path, unix:///path/to.sock or tcp://host:port`,
  );
}

/** Bounds only the probe's calls: pulls and log follows run long. */
const PROBE_TIMEOUT_MS = 5_000;

interface EngineVersion {
  Version: string;
  ApiVersion: string;
  Components?: Array<{ Name: string }> | null;
}

async function probe(endpoint: string, env: NodeJS.ProcessEnv): Promise<EngineRuntime> {
  if (endpoint.startsWith('unix://') && !existsSync(endpoint.slice('unix://'.length)))
    throw new Error('no socket at this path');
  const api = engineApiFor(endpoint, env);
  await api.json('GET', '/_ping', { timeoutMs: PROBE_TIMEOUT_MS });
  const version = await api.json<EngineVersion>('GET', '/version', { timeoutMs: PROBE_TIMEOUT_MS });
  const isPodman = (version.Components ?? []).some((c) => /podman/i.test(c.Name));
  const info: RuntimeInfo = {
    endpoint,
    flavor: isPodman ? 'podman' : 'docker',
    version: version.Version,
    apiVersion: version.ApiVersion,
  };
  return new EngineRuntime(api, info);
}

/** Connects to the first endpoint that answers a ping; otherwise says what was tried and how to fix it. */
export async function connectRuntime(
  env: NodeJS.ProcessEnv = process.env,
  candidates: readonly RuntimeEndpoint[] = runtimeEndpoints(env),
): Promise<ContainerRuntime> {
  const tried: string[] = [];
  for (const candidate of candidates) {
    try {
      return await probe(candidate.endpoint, env);
    } catch (err) {
      if ((err as { kind?: string }).kind === 'usage') throw err;
      tried.push(`  ${candidate.origin}: ${candidate.endpoint} (${errorMessage(err)})`);
    }
  }
  throw runtimeError(
    [
      'no container runtime is reachable. Tried:',
      ...tried,
      'Start one, for example `podman system service --time=0 unix:///run/podman/podman.sock` ' +
        '(rootless: `systemctl --user start podman.socket`) or the Docker daemon, ' +
        'or point MOAT_RUNTIME_SOCKET (or DOCKER_HOST) at its API socket.',
    ].join('\n'),
  );
}
