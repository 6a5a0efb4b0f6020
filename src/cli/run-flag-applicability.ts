/**
 * Which flags apply to which target: container flags not with a remote URL, remote-auth flags only
 * with one, build flags only with a protocol scheme, token-exchange flags only with
 * --token-exchange-url, and pairs that exclude each other. Checked before anything is built, so
 * the error names the flags and the target.
 */
import { usageError } from '../util/errors.js';
import type { RunFlagName } from './run-flag-values.js';
import type { Target } from './run-target.js';

/** Flags that configure a container, meaningless for a remote URL. */
const CONTAINER_ONLY: readonly RunFlagName[] = [
  'volume',
  'publish',
  'label',
  'env',
  'env-file',
  'env-file-dir',
  'secret',
  'network',
  'permission-profile',
  'isolate-network',
  'allow-docker-gateway',
  'target-port',
  'target-host',
  'proxy-mode',
  'ignore-globally',
  'print-resolved-overlays',
];
const BUILD_ONLY: readonly RunFlagName[] = ['build-with', 'ca-cert', 'runtime-add-package', 'runtime-image'];
const REMOTE_ONLY: readonly RunFlagName[] = [
  'remote-auth',
  'remote-auth-issuer',
  'remote-auth-authorize-url',
  'remote-auth-token-url',
  'remote-auth-client-id',
  'remote-auth-client-metadata-url',
  'remote-auth-client-secret',
  'remote-auth-client-secret-file',
  'remote-auth-bearer-token',
  'remote-auth-bearer-token-file',
  'remote-auth-scopes',
  'remote-auth-scope-param-name',
  'remote-auth-resource',
  'remote-auth-callback-port',
  'remote-auth-skip-browser',
  'remote-auth-timeout',
  'remote-forward-headers',
  'remote-forward-headers-secret',
  'skip-remote-check',
];
const TOKEN_EXCHANGE: readonly RunFlagName[] = [
  'token-exchange-audience',
  'token-exchange-client-id',
  'token-exchange-client-secret',
  'token-exchange-client-secret-file',
  'token-exchange-header-name',
  'token-exchange-scopes',
  'token-exchange-subject-token-type',
];
/**
 * Flags that exclude each other. "A secret or a file holding it" is a rule of the RunConfig
 * schema instead (a hand-written config must obey it too); see invalidDraft in run-build.ts.
 */
/**
 * Flags `moat group serve` refuses besides the container, build and remote ones: an aggregate
 * speaks streamable HTTP to its aggregator (a stateful server: sessions with every member), has
 * no image to verify, and its aggregator reaches the
 * members itself (a token exchanged for the aggregator would go nowhere). --from-config is
 * `moat run`'s (an exported aggregate runs again with `moat run --from-config`).
 */
const NOT_AGGREGATE: readonly RunFlagName[] = [
  'transport',
  'stateless',
  'from-config',
  'allow-metadata-address',
  'image-verification',
  'token-exchange-url',
  ...TOKEN_EXCHANGE,
];

/** Every `moat run` flag an aggregate refuses (`moat group serve` hides them from its help). */
export const AGGREGATE_REFUSED: readonly RunFlagName[] = [
  ...new Set([...CONTAINER_ONLY, ...BUILD_ONLY, ...REMOTE_ONLY, ...NOT_AGGREGATE]),
];

const EXCLUSIVE_PAIRS: readonly (readonly [RunFlagName, RunFlagName])[] = [
  ['remote-auth-issuer', 'remote-auth-authorize-url'],
  ['remote-auth-issuer', 'remote-auth-token-url'],
];

function describeTarget(target: Target): string {
  if (target.kind === 'remote') return `a remote URL (${target.url})`;
  if (target.kind === 'protocol') return `a ${target.scheme}:// package`;
  if (target.kind === 'aggregate') return `the aggregate of group "${target.group}" (moat group serve)`;
  return `an image (${target.ref})`;
}

export function used(explicit: ReadonlySet<RunFlagName>, names: readonly RunFlagName[]): RunFlagName[] {
  return names.filter((name) => explicit.has(name));
}

export function checkApplicability(
  target: Target,
  explicit: ReadonlySet<RunFlagName>,
  serverArgs: string[],
): void {
  const misplaced = (names: RunFlagName[], why: string): void => {
    if (names.length > 0) {
      throw usageError(
        `${names.map((n) => `--${n}`).join(', ')} ${why}; the target is ${describeTarget(target)}`,
      );
    }
  };
  if (target.kind === 'aggregate') {
    // It runs no container, builds nothing and reaches no remote URL: only the proxy's flags apply.
    misplaced(used(explicit, AGGREGATE_REFUSED), 'cannot be used with moat group serve');
    return;
  }
  if (target.kind === 'remote') {
    misplaced(used(explicit, CONTAINER_ONLY), 'can only be used with containers, not with remote URLs');
    if (serverArgs.length > 0) {
      throw usageError(`arguments after -- go to a container; the target is ${describeTarget(target)}`);
    }
  } else {
    misplaced(used(explicit, REMOTE_ONLY), 'can only be used with remote URL targets');
  }
  if (target.kind !== 'protocol') {
    misplaced(
      used(explicit, BUILD_ONLY),
      'can only be used with protocol-scheme targets (uvx://, npx://, go://)',
    );
  }
  for (const [a, b] of EXCLUSIVE_PAIRS) {
    if (explicit.has(a) && explicit.has(b)) throw usageError(`--${a} and --${b} cannot be used together`);
  }
  if (!explicit.has('token-exchange-url')) {
    misplaced(
      used(explicit, TOKEN_EXCHANGE),
      'can only be used with --token-exchange-url (it enables token exchange)',
    );
  }
}
