/**
 * Installs the operator's generated CRDs (deploy/helm/moat-operator/crds) on the test API server and waits until each is
 * Established and served. Idempotent: an existing CRD is replaced with the committed one, so every test file
 * (CRD tests, controller tests) can call it.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ApiException,
  ApiextensionsV1Api,
  CustomObjectsApi,
  loadYaml,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';

const CRD_DIR = fileURLToPath(new URL('../../deploy/helm/moat-operator/crds/', import.meta.url));
const ESTABLISHED_TIMEOUT_MS = 30_000;

/** The committed CRDs, parsed with client-node's loadYaml so `x-kubernetes-*` keys survive serialization. */
export async function loadCrds(): Promise<V1CustomResourceDefinition[]> {
  const files = (await readdir(CRD_DIR)).filter((f) => f.endsWith('.yaml')).sort();
  return Promise.all(
    files.map(async (f) => loadYaml<V1CustomResourceDefinition>(await readFile(join(CRD_DIR, f), 'utf8'))),
  );
}

export async function installCrds(kc: KubeConfig): Promise<V1CustomResourceDefinition[]> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  const crds = await loadCrds();
  for (const crd of crds) await createOrReplace(api, crd);
  for (const crd of crds) await waitServed(kc, api, crd);
  return crds;
}

async function createOrReplace(api: ApiextensionsV1Api, crd: V1CustomResourceDefinition): Promise<void> {
  const name = crd.metadata!.name!;
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await api.createCustomResourceDefinition({ body: crd });
      return;
    } catch (error) {
      if (!(error instanceof ApiException) || error.code !== 409) throw error;
    }
    const existing = await api.readCustomResourceDefinition({ name });
    try {
      await api.replaceCustomResourceDefinition({
        name,
        body: { ...crd, metadata: { ...crd.metadata, resourceVersion: existing.metadata?.resourceVersion } },
      });
      return;
    } catch (error) {
      // Another test file replaced it between our read and write: read again.
      if (!(error instanceof ApiException) || error.code !== 409) throw error;
    }
  }
  throw new Error(`CRD ${name}: could not create or replace it after 5 conflicts`);
}

/** Waits (bounded) for Established, then until a list of the new resource succeeds (discovery has caught up). */
async function waitServed(
  kc: KubeConfig,
  api: ApiextensionsV1Api,
  crd: V1CustomResourceDefinition,
): Promise<void> {
  const name = crd.metadata!.name!;
  const deadline = Date.now() + ESTABLISHED_TIMEOUT_MS;
  const objects = kc.makeApiClient(CustomObjectsApi);
  let last = 'not Established';
  while (Date.now() < deadline) {
    const current = await api.readCustomResourceDefinition({ name });
    const established = current.status?.conditions?.some(
      (c) => c.type === 'Established' && c.status === 'True',
    );
    if (established) {
      try {
        await objects.listClusterCustomObject({
          group: crd.spec.group,
          version: crd.spec.versions[0]!.name,
          plural: crd.spec.names.plural,
        });
        return;
      } catch (error) {
        last = `list failed: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`CRD ${name} not served within ${ESTABLISHED_TIMEOUT_MS} ms (${last})`);
}
