/**
 * `moat run <name>`: a target that is not a URL or a protocol scheme is first looked up in the
 * registry. A hit becomes what the entry describes (an image, an npx:// or uvx:// build, or a
 * remote URL) with its settings as defaults the flags override: transport, target port,
 * permission profile, server arguments (unless given after `--`), environment defaults, and
 * remote headers, with `{name}` placeholders filled from the entry's variables, and the image's
 * provenance for --image-verification. A required variable or header the user did not give is
 * asked for on a terminal (a secret without echo, then kept in the secrets manager so the next
 * run does not ask); without a terminal it is a one-line error naming the flag that sets it.
 */
import type { RunConfig } from '../config/runconfig.js';
import type { ImageProvenance } from '../runtime/verify/provenance.js';
import type { ParsedRun } from './run-command.js';
import { mayBeRegistryName } from './run-target.js';
import type { RegistryRunContext } from './run-registry-entry.js';

export type { RegistryRunContext } from './run-registry-entry.js';

/**
 * The registry lookup itself, loaded only when a target may name a registry server: it brings the
 * catalog, its schema and the registry's HTTP client, which `moat run <URL>` does without.
 */
const entries = () => import('./run-registry-entry.js');

/** The parsed command line with a registry target replaced by what its entry describes. */
export async function resolveRegistryTarget(parsed: ParsedRun, ctx: RegistryRunContext): Promise<ParsedRun> {
  const typed = parsed.target;
  if (typed === undefined || !mayBeRegistryName(typed)) return parsed;
  return (await entries()).runRegistryEntry(parsed, typed, ctx);
}

/**
 * The provenance a saved RunConfig's registry entry gives its image (for `moat run
 * --from-config`), looked up only when it will be checked; undefined when there is none.
 */
export async function provenanceOfSavedEntry(
  config: RunConfig,
  ctx: RegistryRunContext,
): Promise<ImageProvenance | undefined> {
  const name = config.registry_server_name;
  if (name === undefined || config.remote_url || config.image_verification === 'disabled') return undefined;
  return (await entries()).savedEntryProvenance(name, ctx);
}
