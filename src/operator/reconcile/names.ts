/**
 * Names and labels of the objects made for one MCPRemoteProxy. Every name carries the
 * `remote-proxy` part, so a future MCPServer of the same name in the namespace cannot collide with
 * them (ToolHive QUIRK: its Deployment and RunConfig ConfigMap used the bare CR name).
 */
import { createHash } from 'node:crypto';

/** Service names are DNS-1035 labels: at most 63 characters. */
const MAX_NAME = 63;

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/**
 * `<prefix><name><suffix>`, with the name cut and a hash of it added when the result is too long
 * or when the name had to change (dots are not allowed in a Service name: `a.b` becomes `a-b-<hash>`,
 * so it cannot collide with a proxy named `a-b`).
 */
function boundedName(prefix: string, name: string, suffix: string, label = false): string {
  const safe = label ? name : name.replaceAll('.', '-');
  const full = `${prefix}${safe}${suffix}`;
  if (full.length <= MAX_NAME && safe === name) return full;
  const room = MAX_NAME - prefix.length - suffix.length - 9;
  const head = safe.slice(0, room).replace(/[-.]+$/, '');
  return `${prefix}${head}-${shortHash(name)}${suffix}`;
}

export interface ProxyObjectNames {
  deployment: string;
  service: string;
  configMap: string;
  serviceAccount: string;
}

export function proxyObjectNames(proxyName: string): ProxyObjectNames {
  const base = boundedName('mcp-', proxyName, '-remote-proxy');
  return {
    deployment: base,
    service: base,
    configMap: boundedName('mcp-', proxyName, '-remote-proxy-config'),
    serviceAccount: base,
  };
}

/** A label value is at most 63 characters; longer proxy names are cut and hashed like object names. */
function labelValue(name: string): string {
  return boundedName('', name, '', true);
}

export const LABEL_NAME = 'app.kubernetes.io/name';
export const LABEL_INSTANCE = 'app.kubernetes.io/instance';
export const LABEL_COMPONENT = 'app.kubernetes.io/component';
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'moat-operator';

/**
 * The labels that select the proxy's pods: on the Deployment's selector and the Service's selector,
 * so they can never be overridden (a Deployment selector is immutable).
 */
export function selectorLabels(proxyName: string): Record<string, string> {
  return { [LABEL_NAME]: 'mcpremoteproxy', [LABEL_INSTANCE]: labelValue(proxyName) };
}

/** Selector labels plus what marks the object as the operator's: on every object it makes. */
export function proxyLabels(proxyName: string): Record<string, string> {
  return {
    ...selectorLabels(proxyName),
    [LABEL_COMPONENT]: 'remote-proxy',
    [LABEL_MANAGED_BY]: MANAGED_BY,
  };
}

/** The proxy's in-cluster URL: the Service's DNS name and the current proxyPort. */
export function proxyServiceUrl(proxyName: string, namespace: string, port: number): string {
  return `http://${proxyObjectNames(proxyName).service}.${namespace}.svc.cluster.local:${port}`;
}
