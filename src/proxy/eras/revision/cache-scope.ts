/**
 * MCP 2026-07-28 caching hints (`ttlMs`, `cacheScope` on results) pass through the proxy
 * unchanged, with one exception: when a policy that can answer differently per caller is
 * configured (Cedar authorization, which filters list answers per principal; mutating webhooks,
 * which may rewrite answers per caller), a `cacheScope: "public"` becomes `"private"`. A public
 * answer may be cached by a shared intermediary and served to other users; an answer shaped for
 * one principal must not be. `ttlMs` is never changed (never lengthened), and `"private"` is never
 * widened. Policies that treat every caller alike (tool filter, pinning) keep `"public"`.
 */
import type { RunConfig } from '../../../config/runconfig.js';
import type { JsonRpcResponse } from '../../../mcp/jsonrpc.js';
import type { MessagePolicy } from '../../../mcp/policy.js';

export const CACHE_SCOPE_POLICY = 'cache-scope';

/** The answer with `cacheScope` narrowed to `"private"` when it said `"public"`. */
export function narrowCacheScope(response: JsonRpcResponse): JsonRpcResponse {
  const result = response.result;
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return response;
  if ((result as Record<string, unknown>).cacheScope !== 'public') return response;
  return { ...response, result: { ...result, cacheScope: 'private' } };
}

/** The policy for a proxy whose answers may differ per principal. */
export function createCacheScopePolicy(): MessagePolicy {
  return {
    name: CACHE_SCOPE_POLICY,
    // Screens the raw text, so answers without a public hint pass unparsed.
    needsResponse: (_method, text) => text.includes('"public"'),
    onServerResponse: (response) => narrowCacheScope(response),
  };
}

/** Whether a configured policy may shape answers per caller (the cases above). */
export function answersDifferPerPrincipal(
  config: Pick<RunConfig, 'authz_config' | 'authz_config_path' | 'mutating_webhooks'>,
): boolean {
  return (
    config.authz_config !== undefined ||
    config.authz_config_path !== undefined ||
    (config.mutating_webhooks?.length ?? 0) > 0
  );
}
