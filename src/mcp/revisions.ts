/**
 * The MCP protocol revisions Moat knows: the one list, and the one name for each revision it
 * treats specially. Session revisions (2024-11-05 to 2025-11-25) have `initialize` and sessions;
 * the stateless revision (2026-07-28) has neither and carries the client's facts in each
 * request's `_meta` envelope (the keys below).
 */

/** Every revision Moat knows, oldest first. */
export const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'] as const;

/** The stateless revision: no `initialize`, no sessions, POST only, the `_meta` envelope. */
export const STATELESS_REVISION = '2026-07-28';

/** The newest session revision: what Moat speaks to a session-era server for a stateless client. */
export const LATEST_SESSION_REVISION = '2025-11-25';

/** The session revisions a client may negotiate with `initialize`, oldest first. */
export const SESSION_REVISIONS: readonly string[] = REVISIONS.filter((r) => r < STATELESS_REVISION);

/** The `_meta` keys of the stateless revision's request envelope and result metadata. */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

export function isKnownRevision(version: string): boolean {
  return (REVISIONS as readonly string[]).includes(version);
}

/** The stateless revision or a later one (a later date: its rules are at least those of 2026-07-28). */
export function isStatelessRevisionName(version: string): boolean {
  return version >= STATELESS_REVISION && /^\d{4}-\d{2}-\d{2}$/.test(version);
}

/** The `server/discover` request Moat asks a backend with (2026-07-28 envelope). */
export function discoverProbe(
  id: number | string,
  client: { name: string; version: string } = { name: 'moat', version: '1' },
): {
  jsonrpc: '2.0';
  id: number | string;
  method: string;
  params: Record<string, unknown>;
} {
  return {
    jsonrpc: '2.0',
    id,
    method: 'server/discover',
    params: {
      _meta: {
        [META.protocolVersion]: STATELESS_REVISION,
        [META.clientCapabilities]: {},
        [META.clientInfo]: client,
      },
    },
  };
}
