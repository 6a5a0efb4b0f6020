/** The shapes the client table, the format adapters and the sync share. */

/** What Moat points a client at: one workload's proxy (an aggregate endpoint later is one more kind). */
export interface Endpoint {
  /** The entry's name in the client's file: the workload name. */
  name: string;
  url: string;
  /** What the proxy speaks to clients. */
  transport: 'streamable-http' | 'sse';
  /** The proxy requires OIDC tokens (RFC 9728 metadata is served). */
  requiresAuth: boolean;
}

/** How an entry authenticates: nothing (or the client's own OAuth discovery), or a header from an env var. */
export type EntryAuth = { kind: 'none' } | { kind: 'header'; envVar: string };

export type FileFormat = 'json' | 'jsonc' | 'toml' | 'yaml';

/**
 * Where a client keeps its MCP servers inside its file: a map from name to entry at `path`, or
 * (`listKey`) a list of entries told apart by that field.
 */
export interface EntriesAt {
  path: string[];
  listKey?: string;
}

/** The environment a client's file location depends on. */
export interface ClientEnv {
  home: string;
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
}

export interface ClientSpec {
  /** The id on the command line (`moat client register <id>`). */
  id: string;
  title: string;
  /** The config file for this platform. */
  file(env: ClientEnv): string;
  /** The same, as docs/clients.md and `moat client list` describe it per platform. */
  documented: { linux: string; macos: string; windows: string };
  format: FileFormat;
  at: EntriesAt;
  /** What the client speaks to the proxy ('stdio-shim': a command bridging stdio to the URL). */
  transports: Array<'streamable-http' | 'sse' | 'stdio-shim'>;
  /** The client discovers the proxy's OAuth metadata (RFC 9728) and logs in itself. */
  oauthDiscovery: boolean;
  /** How a header value names an environment variable, when the client expands them. */
  envReference?: (name: string) => string;
  /** The entry for one endpoint, or a reason this client cannot use it. */
  entry(endpoint: Endpoint, auth: EntryAuth): Record<string, unknown> | { unsupported: string };
  /** An executable whose presence on PATH says the client is installed. */
  command?: string;
}
