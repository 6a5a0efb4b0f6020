/**
 * RunConfig → ContainerSpec (pure). Every container runs with all capabilities dropped and
 * no-new-privileges, no restart policy (the supervisor restarts), Moat's labels, the profile's
 * mounts and a network that really enforces the profile:
 *
 * - bridge networking with isolation (`--isolate-network`, the CLI's default), or any profile
 *   that restricts outbound traffic: the workload's network sandbox (egress/sandbox.ts). It has
 *   loopback only; its one way out is the egress proxy, which enforces the profile and (when
 *   isolated) refuses the engine's gateway addresses unless `--allow-docker-gateway`;
 * - a stdio server that may reach nothing: no network at all (`none`);
 * - otherwise the requested network (bridge without isolation, host, or a named network), where
 *   the container can reach the host.
 *
 * HTTP servers listen on 0.0.0.0 inside their own network namespace (MCP_HOST), because a
 * published port or a bridge peer arrives on the container's interface, not on loopback; the
 * port is published on 127.0.0.1 only, at a host port the engine picks (read it back with
 * `httpTarget`). With `--network host` there is no namespace: the server binds `target_host`.
 */
import { DEFAULTS } from '../config/defaults.js';
import { groupOf } from '../config/derived.js';
import type { RunConfig } from '../config/runconfig.js';
import { usageError } from '../util/errors.js';
import { log } from '../util/log.js';
import { builtinProfile, collectMounts, networkModeOf, outboundPolicy } from './permissions.js';
import { EGRESS_PROXY_PORT, type GatewayRule } from './egress/proxy-source.js';
import { sandboxNetworkMode } from './egress/sandbox.js';
import {
  LABELS,
  type ContainerInfo,
  type ContainerSpec,
  type PortBinding,
  type SandboxSpec,
} from './types.js';
import type { PermissionProfile } from '../config/runconfig.js';

export interface SpecOptions {
  /** Resolves relative host paths in mounts (default: the process's working directory). */
  cwd?: string;
}

/** Docker's rule for container names. */
const CONTAINER_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$/;

const LABEL_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Kubernetes-style label rules; throws a usage error naming the label. */
export function validateLabel(key: string, value: string): void {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)))
    throw usageError(
      `label key ${JSON.stringify(key)}: the prefix must be a DNS subdomain (e.g. example.com/)`,
    );
  if (!LABEL_NAME.test(name))
    throw usageError(
      `label key ${JSON.stringify(key)}: the name must be 1-63 characters of letters, digits, '-', '_' or '.', ` +
        'starting and ending with a letter or digit',
    );
  if (value !== '' && !LABEL_NAME.test(value))
    throw usageError(
      `label ${key}=${JSON.stringify(value)}: the value must be empty or 1-63 characters of letters, digits, ` +
        "'-', '_' or '.', starting and ending with a letter or digit",
    );
  if (key === LABELS.managed || key.startsWith(`${LABELS.managed}-`))
    throw usageError(`label key ${JSON.stringify(key)} is reserved for Moat`);
}

/** The profile in effect: the stored one, else the named builtin, else `network`. */
export function effectiveProfile(config: RunConfig): PermissionProfile {
  if (config.permission_profile) return config.permission_profile;
  const name = config.permission_profile_name_or_path ?? DEFAULTS.permissionProfile;
  const builtin = builtinProfile(name);
  if (!builtin)
    throw usageError(
      `the run configuration names permission profile ${name} but does not contain it (permission_profile is null)`,
    );
  return builtin;
}

function isHttp(config: RunConfig): boolean {
  return config.transport === 'sse' || config.transport === 'streamable-http';
}

/** `[ip:]hostPort:containerPort[/tcp]`; the host address defaults to 127.0.0.1 (never all interfaces by accident). */
export function parsePublish(value: string): PortBinding {
  const [body = '', protocol = 'tcp'] = value.split('/');
  if (protocol !== 'tcp') throw usageError(`-p ${value}: only tcp ports can be published`);
  const parts = body.split(':');
  if (parts.length < 2 || parts.length > 3)
    throw usageError(`-p ${value}: expected hostPort:containerPort (or ip:hostPort:containerPort)`);
  const [hostIp, host, container] = parts.length === 3 ? parts : ['127.0.0.1', ...parts];
  const port = (text: string | undefined, what: string, min: number): number => {
    const n = Number(text);
    if (!/^\d+$/.test(text ?? '') || n < min || n > 65535)
      throw usageError(`-p ${value}: the ${what} port must be a number from ${min} to 65535`);
    return n;
  };
  if (!hostIp || !/^[\d.]+$|^[\da-fA-F:]+$/.test(hostIp))
    throw usageError(`-p ${value}: the host address must be an IP address`);
  return { hostIp, hostPort: port(host, 'host', 0), containerPort: port(container, 'container', 1) };
}

interface NetworkPlan {
  networkMode: string;
  sandbox?: Omit<SandboxSpec, 'proxyPort' | 'ingressPort'>;
}

/** Whether isolation is asked for: the CLI always sets it (default true); a bare RunConfig means no. */
function isolationRequested(config: RunConfig): boolean {
  return config.isolate_network === true;
}

/** The line that says why isolation is dropped with a non-bridge `--network` mode. */
export function isolationDroppedReason(mode: string): string {
  if (mode === 'none')
    return 'network isolation is not needed with --network none: the container has no network at all';
  return (
    `network isolation is off: it needs bridge networking, and --network ${mode} puts the container on ` +
    `${mode === 'host' ? "the host's network" : `network ${mode}`}, where it can reach the host and its services`
  );
}

/** The dropped-isolation line for a RunConfig that asks for isolation on a non-bridge network. */
export function isolationDropped(config: RunConfig): string | undefined {
  if (config.remote_url || !isolationRequested(config)) return undefined;
  const mode = networkModeOf(effectiveProfile(config));
  return mode === 'bridge' ? undefined : isolationDroppedReason(mode);
}

function planNetwork(config: RunConfig, profile: PermissionProfile): NetworkPlan {
  const mode = networkModeOf(profile);
  const http = isHttp(config);
  if (http && mode === 'none')
    throw usageError(
      `--network none leaves an ${config.transport} server unreachable; use it with --transport stdio, ` +
        'or the `none` permission profile to deny outbound traffic',
    );
  const policy = outboundPolicy(profile);
  const isolate = isolationRequested(config);
  if (mode === 'none') return { networkMode: 'none' };
  if (mode !== 'bridge') {
    if (policy.kind === 'allow-all') return { networkMode: mode };
    throw usageError(
      `the permission profile restricts outbound network access, which cannot be enforced with --network ${mode}; ` +
        'drop --network or use a profile that allows the network (e.g. `network`)',
    );
  }
  if (!isolate && policy.kind === 'allow-all') return { networkMode: mode };
  const gateway: GatewayRule = !isolate ? 'profile' : config.allow_docker_gateway ? 'allow' : 'block';
  // Nothing may leave and nothing needs to come in: no network is stricter than any sandbox.
  if (!http && policy.kind === 'deny-all' && gateway !== 'allow') return { networkMode: 'none' };
  return {
    networkMode: sandboxNetworkMode(config.container_name ?? config.name),
    sandbox: {
      allowAll: policy.kind === 'allow-all',
      allowHosts: policy.kind === 'allowlist' ? policy.allowHosts : [],
      allowPorts: policy.kind === 'allowlist' ? policy.allowPorts : [],
      gateway,
    },
  };
}

/** The container for a workload; `env` is the resolved environment (env files, -e, secrets). */
export function buildContainerSpec(
  config: RunConfig,
  env: Record<string, string>,
  options: SpecOptions = {},
): ContainerSpec {
  const name = config.container_name ?? config.name;
  if (!CONTAINER_NAME.test(name))
    throw usageError(
      `container name ${JSON.stringify(name)}: use 1-128 letters, digits, '_', '.' or '-', starting with a letter or digit`,
    );
  const profile = effectiveProfile(config);
  const network = planNetwork(config, profile);
  const mounts = collectMounts(profile, config.volumes ?? [], options.cwd ?? process.cwd());

  const userLabels = config.container_labels ?? {};
  for (const [key, value] of Object.entries(userLabels)) validateLabel(key, value);
  const labels: Record<string, string> = {
    ...userLabels,
    [LABELS.managed]: 'true',
    [LABELS.name]: config.name,
    [LABELS.baseName]: config.base_name ?? config.name,
    [LABELS.transport]: config.transport,
    [LABELS.port]: String(config.port),
    [LABELS.group]: groupOf(config),
  };

  const transportEnv: Record<string, string> = { MCP_TRANSPORT: config.transport };
  const ports: PortBinding[] = [];
  if (isHttp(config)) {
    const targetPort = config.target_port;
    if (!targetPort)
      throw usageError(`an ${config.transport} server needs a target port (--target-port or target_port)`);
    const onHost = network.networkMode === 'host';
    Object.assign(transportEnv, {
      MCP_PORT: String(targetPort),
      FASTMCP_PORT: String(targetPort),
      MCP_HOST: onHost ? (config.target_host ?? DEFAULTS.targetHost) : '0.0.0.0',
    });
    if (!onHost) ports.push({ containerPort: targetPort, hostIp: '127.0.0.1', hostPort: 0 });
  }
  const extra = (config.publish ?? []).map(parsePublish);
  if (
    extra.length > 0 &&
    (network.networkMode === 'host' || network.networkMode === 'none' || network.sandbox)
  )
    throw usageError(
      `-p cannot publish ports with this network (${network.sandbox ? 'an isolated workload has only its MCP port; use --isolate-network=false with the network profile' : network.networkMode})`,
    );
  ports.push(...extra);
  const targetPort = isHttp(config) ? config.target_port : undefined;

  if (profile.privileged)
    log().warn(
      { workload: config.name },
      'the permission profile makes this container PRIVILEGED: it gets full access to the host; use only with servers you trust',
    );

  return {
    name,
    image: config.image,
    cmd: config.cmd_args ?? [],
    env: { ...env, ...transportEnv },
    labels,
    mounts,
    ports,
    networkMode: network.networkMode,
    ...(network.sandbox
      ? {
          sandbox: {
            ...network.sandbox,
            // The workload's loopback is shared with the relay: keep clear of the server's own port.
            proxyPort: targetPort === EGRESS_PROXY_PORT ? EGRESS_PROXY_PORT + 1 : EGRESS_PROXY_PORT,
            ...(targetPort ? { ingressPort: targetPort } : {}),
          },
        }
      : {}),
    attachStdio: config.transport === 'stdio',
    privileged: profile.privileged === true,
    capDrop: ['ALL'],
    securityOpt: ['no-new-privileges'],
  };
}

/**
 * Where the proxy reaches an HTTP server's container: the published 127.0.0.1 binding of the
 * target port (on the egress proxy for a sandboxed workload: the runtime reports it as the
 * workload's), else (host network) the target host. undefined while nothing is published yet.
 */
export function httpTarget(
  spec: Pick<ContainerSpec, 'networkMode'>,
  info: ContainerInfo,
  targetPort: number,
  targetHost: string = DEFAULTS.targetHost,
): { host: string; port: number } | undefined {
  if (spec.networkMode === 'host') return { host: targetHost, port: targetPort };
  const binding = info.ports.find((p) => p.containerPort === targetPort);
  if (!binding) return undefined;
  return { host: binding.hostIp === '0.0.0.0' ? '127.0.0.1' : binding.hostIp, port: binding.hostPort };
}
