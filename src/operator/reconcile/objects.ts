/**
 * The desired objects of one MCPRemoteProxy: ServiceAccount (unless `spec.serviceAccount` names
 * one), RunConfig ConfigMap, Deployment and Service. Owner references are the apply layer's job.
 *
 * No Role or RoleBinding: the proxy reads its config from mounted files and env and calls no
 * Kubernetes API, so any rule would be privilege it never uses (ToolHive granted read on every
 * Secret and ConfigMap of the namespace). Fetching the cluster's OIDC keys with
 * `kubernetesServiceAccount` needs no Role either: Kubernetes grants issuer discovery to every
 * service account (ClusterRole system:service-account-issuer-discovery).
 */
import type { V1ConfigMap, V1Deployment, V1Service, V1ServiceAccount } from '@kubernetes/client-node';
import type { RunConfig } from '../../config/runconfig.js';
import { buildDeployment, pullSecrets } from './deployment.js';
import type { OperatorOptions, ProxyInputs } from './inputs.js';
import { RUNCONFIG_KEY } from './mounts.js';
import { proxyLabels, proxyObjectNames, selectorLabels } from './names.js';
import { buildRunConfig } from './runconfig.js';

export interface DesiredObjects {
  runConfig: RunConfig;
  /** Absent when the proxy uses its own `spec.serviceAccount`: the apply layer removes one it made. */
  serviceAccount?: V1ServiceAccount;
  configMap: V1ConfigMap;
  deployment: V1Deployment;
  service: V1Service;
  /** User fields of resourceOverrides/podTemplateSpec that were not applied. */
  ignored: string[];
}

/** Assumes validation passed; throws a usage error if the RunConfig still does not validate. */
export function desiredObjects(inputs: ProxyInputs, options: OperatorOptions): DesiredObjects {
  const runConfig = buildRunConfig(inputs);
  const { deployment, ignored } = buildDeployment(inputs, runConfig, options);
  return {
    runConfig,
    ...(inputs.proxy.spec.serviceAccount ? {} : { serviceAccount: buildServiceAccount(inputs, options) }),
    configMap: buildConfigMap(inputs, runConfig),
    deployment,
    service: buildService(inputs),
    ignored,
  };
}

function metadata(inputs: ProxyInputs, name: string) {
  return {
    name,
    namespace: inputs.proxy.metadata.namespace,
    labels: proxyLabels(inputs.proxy.metadata.name ?? ''),
  };
}

export function buildServiceAccount(inputs: ProxyInputs, options: OperatorOptions): V1ServiceAccount {
  const secrets = pullSecrets(inputs.proxy.spec, options);
  return {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: metadata(inputs, proxyObjectNames(inputs.proxy.metadata.name ?? '').serviceAccount),
    // Pods opt in to a token only when they need one (see deployment.ts).
    automountServiceAccountToken: false,
    ...(secrets.length > 0 ? { imagePullSecrets: secrets.map((name) => ({ name })) } : {}),
  };
}

export function buildConfigMap(inputs: ProxyInputs, runConfig: RunConfig): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: metadata(inputs, proxyObjectNames(inputs.proxy.metadata.name ?? '').configMap),
    data: { [RUNCONFIG_KEY]: `${JSON.stringify(runConfig, null, 2)}\n` },
  };
}

export function buildService(inputs: ProxyInputs): V1Service {
  const { spec } = inputs.proxy;
  const name = inputs.proxy.metadata.name ?? '';
  const overrides = spec.resourceOverrides?.proxyService;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      ...metadata(inputs, proxyObjectNames(name).service),
      // The operator's labels win: they identify the proxy's objects.
      labels: { ...overrides?.labels, ...proxyLabels(name) },
      ...(overrides?.annotations ? { annotations: overrides.annotations } : {}),
    },
    spec: {
      type: 'ClusterIP',
      selector: selectorLabels(name),
      ports: [{ name: 'http', port: spec.proxyPort, targetPort: 'http', protocol: 'TCP' }],
      sessionAffinity: spec.sessionAffinity,
    },
  };
}
