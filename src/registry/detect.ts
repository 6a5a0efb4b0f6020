/**
 * What `moat config set-registry` was given: a registry file, a registry document at a URL, or an
 * MCP Registry API base URL. A URL is first asked `GET <base>/v0.1/servers?limit=1`; when that is
 * no API answer, it is read as a registry document. Neither is a usage error naming both reasons;
 * an unreachable URL, or an API that refuses Moat's token (MOAT_REGISTRY_TOKEN), is a runtime error.
 */
import { resolve } from 'node:path';
import { errorMessage, usageError } from '../util/errors.js';
import { RegistryApiClient, RegistryRefusedError, apiBaseUrl } from './api-client.js';
import { RegistryUnreachableError, checkRegistryUrl } from './guarded-fetch.js';
import { isUrl, loadRegistry, type RegistrySource } from './source.js';

export interface DetectedRegistry {
  source: RegistrySource;
  /** How many servers a registry document has (an API is not listed whole to count them). */
  servers?: number;
}

export async function detectRegistryKind(
  location: string,
  allowPrivateIp: boolean,
  env: NodeJS.ProcessEnv = process.env,
): Promise<DetectedRegistry> {
  if (!isUrl(location)) {
    const source = { location: resolve(location), allowPrivateIp };
    return { source, servers: (await loadRegistry(source)).length };
  }
  checkRegistryUrl(location, allowPrivateIp);
  const token = env.MOAT_REGISTRY_TOKEN;
  const client = new RegistryApiClient(location, { allowPrivateIp, ...(token ? { token } : {}) });
  let notApi: string;
  try {
    await client.probe();
    return { source: { location: apiBaseUrl(location), allowPrivateIp, kind: 'api' } };
  } catch (err) {
    if (err instanceof RegistryUnreachableError || err instanceof RegistryRefusedError) throw err;
    notApi = errorMessage(err);
  }
  const source = { location, allowPrivateIp };
  try {
    return { source, servers: (await loadRegistry(source)).length };
  } catch (err) {
    throw usageError(
      `${location} is neither an MCP Registry API (${notApi}) nor a registry file (${errorMessage(err)})`,
    );
  }
}
