/**
 * The registry `moat run <name>`, `moat registry` and `moat search` read: the built-in catalog,
 * overridden entry by entry by the user's registry (`moat config set-registry`).
 */
import { errorMessage } from '../util/errors.js';
import { CATALOG, CATALOG_SOURCE } from './catalog.js';
import { mergeRegistries } from './lookup.js';
import { parseRegistryDocument, type RegistryServer } from './schema.js';
import { configuredRegistry, loadRegistry } from './source.js';

export { closestNames, findServer, searchServers, shortName } from './lookup.js';
export { fillPlaceholders, placeholdersIn, planFor, type DeclaredInput, type RunPlan } from './plan.js';
export { moatSettings, type RegistryServer } from './schema.js';
export {
  checkRegistryUrl,
  configuredRegistry,
  isUrl,
  loadRegistry,
  saveRegistry,
  type RegistrySource,
} from './source.js';

export function catalogServers(): RegistryServer[] {
  return parseRegistryDocument(CATALOG, CATALOG_SOURCE);
}

export interface LoadedRegistry {
  servers: RegistryServer[];
  /** Why the user registry could not be read (only with `tolerateUserFailure`). */
  userProblem?: string;
}

/**
 * The merged registry. With `tolerateUserFailure`, a user registry that cannot be read leaves
 * the catalog alone and says why (a `moat run` of a catalog server should not depend on it).
 */
export async function loadServers(
  options: { env?: NodeJS.ProcessEnv; tolerateUserFailure?: boolean } = {},
): Promise<LoadedRegistry> {
  const catalog = catalogServers();
  const source = await configuredRegistry(options.env);
  if (!source) return { servers: mergeRegistries(catalog) };
  try {
    return { servers: mergeRegistries(catalog, await loadRegistry(source)) };
  } catch (err) {
    if (!options.tolerateUserFailure) throw err;
    return { servers: mergeRegistries(catalog), userProblem: errorMessage(err) };
  }
}
