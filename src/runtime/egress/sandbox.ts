/**
 * A workload's network sandbox (network isolation). Three containers and a volume:
 *
 *   host 127.0.0.1:<published> ──► <name>-egress (default bridge) ──► allowed destinations
 *                                     │ egress.sock ▲   │ ingress.sock
 *                                     ▼ (volume)    │   ▼
 *   workload ── shares the network namespace of ── <name>-relay (loopback only)
 *
 * The workload and its relay have no network interface but loopback, so nothing is routable
 * from them: not the host, not any gateway, not other containers. Their one way out is
 * 127.0.0.1:<proxyPort> (HTTP(S)_PROXY), which the relay passes through a Unix socket to the
 * egress proxy, which enforces the profile and refuses the engine's gateway addresses. The
 * host-side proxy reaches an HTTP server the other way round, through the port published on
 * the egress container. No internal network, DNS or firewall rule is needed, so it works on
 * any engine set-up (Podman CNI or netavark, Docker) without root on the host.
 */
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { EngineApi } from '../docker/api.js';
import { LABELS, type ContainerSpec, type SandboxSpec } from '../types.js';
import type { EgressConfig, RelayConfig } from './proxy-source.js';

/** Where the sandbox volume is mounted in the egress and relay containers. */
const SOCKET_DIR = '/run/moat';
const EGRESS_SOCKET = `${SOCKET_DIR}/egress.sock`;
const INGRESS_SOCKET = `${SOCKET_DIR}/ingress.sock`;
/** Both sandbox containers run as nobody; the volume is a tmpfs only nobody can use. */
const SANDBOX_USER = '65534:65534';

export interface SandboxNames {
  egress: string;
  relay: string;
  volume: string;
}

export function sandboxNames(workload: string): SandboxNames {
  return { egress: `${workload}-egress`, relay: `${workload}-relay`, volume: `moat-${workload}-sandbox` };
}

/** The workload's network mode: its relay's namespace. */
export function sandboxNetworkMode(workload: string): string {
  return `container:${sandboxNames(workload).relay}`;
}

/**
 * Both spellings of the proxy variables, since clients differ in which they read; and
 * NODE_USE_ENV_PROXY, without which Node's built-in `fetch` and `http` (Node 22.21+, 24.5+)
 * ignore them and try to connect directly, which the sandbox has no route for.
 */
export function sandboxProxyEnv(sandbox: SandboxSpec): Record<string, string> {
  const proxy = `http://127.0.0.1:${sandbox.proxyPort}`;
  const local = 'localhost,127.0.0.1,::1';
  return {
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    NO_PROXY: local,
    no_proxy: local,
    NODE_USE_ENV_PROXY: '1',
  };
}

/** `POST /volumes/create`: a tmpfs owned by the sandbox user (sockets only, nothing persists). */
export function sandboxVolumeBody(names: SandboxNames, workload: string): object {
  return {
    Name: names.volume,
    Driver: 'local',
    DriverOpts: { type: 'tmpfs', device: 'tmpfs', o: 'uid=65534,gid=65534,mode=0700' },
    Labels: { [LABELS.egressFor]: workload },
  };
}

/** The parts every sandbox container shares: no capabilities, nobody, the socket volume. */
function sandboxHostConfig(names: SandboxNames, networkMode: string): Record<string, unknown> {
  return {
    NetworkMode: networkMode,
    CapDrop: ['ALL'],
    SecurityOpt: ['no-new-privileges'],
    RestartPolicy: { Name: 'no' },
    Mounts: [{ Type: 'volume', Source: names.volume, Target: SOCKET_DIR, ReadOnly: false }],
  };
}

/** `POST /containers/create` for the egress proxy, with the gateway snapshot taken now. */
export function egressContainerBody(
  spec: Pick<ContainerSpec, 'name' | 'ports'> & { sandbox: SandboxSpec },
  image: string,
  gatewayAddresses: readonly string[],
): object {
  const names = sandboxNames(spec.name);
  const { sandbox } = spec;
  const config: EgressConfig = {
    role: 'egress',
    listen: EGRESS_SOCKET,
    allowAll: sandbox.allowAll,
    allowHosts: sandbox.allowHosts,
    allowPorts: sandbox.allowPorts,
    gateway: sandbox.gateway,
    gatewayAddresses: [...gatewayAddresses],
    ...(sandbox.ingressPort ? { ingress: { port: sandbox.ingressPort, socket: INGRESS_SOCKET } } : {}),
  };
  const exposed: Record<string, object> = {};
  const bindings: Record<string, Array<{ HostIp: string; HostPort: string }>> = {};
  for (const port of spec.ports) {
    const key = `${port.containerPort}/tcp`;
    exposed[key] = {};
    (bindings[key] ??= []).push({
      HostIp: port.hostIp,
      HostPort: port.hostPort === 0 ? '' : String(port.hostPort),
    });
  }
  return {
    Image: image,
    User: SANDBOX_USER,
    Env: [`MOAT_EGRESS_CONFIG=${JSON.stringify(config)}`],
    Labels: { [LABELS.egressFor]: spec.name },
    ExposedPorts: exposed,
    HostConfig: { ...sandboxHostConfig(names, 'bridge'), PortBindings: bindings },
  };
}

/** `POST /containers/create` for the relay that owns the workload's (loopback-only) namespace. */
export function relayContainerBody(
  spec: Pick<ContainerSpec, 'name'> & { sandbox: SandboxSpec },
  image: string,
): object {
  const names = sandboxNames(spec.name);
  const config: RelayConfig = {
    role: 'relay',
    proxyPort: spec.sandbox.proxyPort,
    egressSocket: EGRESS_SOCKET,
    ...(spec.sandbox.ingressPort
      ? { ingress: { socket: INGRESS_SOCKET, targetPort: spec.sandbox.ingressPort } }
      : {}),
  };
  return {
    Image: image,
    User: SANDBOX_USER,
    Env: [`MOAT_EGRESS_CONFIG=${JSON.stringify(config)}`],
    Labels: { [LABELS.egressFor]: spec.name },
    HostConfig: sandboxHostConfig(names, 'none'),
  };
}

/**
 * The host as containers can reach it, now: every gateway address of the engine's networks,
 * plus this host's own interface addresses (a container routes to them through its gateway
 * too). The engine is local (the sandbox needs that), so this process sees the same host.
 */
export async function gatewayAddresses(api: EngineApi): Promise<string[]> {
  const networks = await api.json<Array<{ IPAM?: { Config?: Array<{ Gateway?: string }> | null } }>>(
    'GET',
    '/networks',
  );
  const gateways = networks.flatMap((n) => (n.IPAM?.Config ?? []).map((c) => c.Gateway ?? ''));
  // Link-local addresses only reach the container's own link, never the host.
  const own = Object.values(networkInterfaces())
    .flatMap((list) => (list ?? []).map((i) => i.address))
    .filter((address) => !/^fe80:/i.test(address));
  return [...new Set([...gateways, ...own].filter((g) => isIP(g) !== 0))];
}
