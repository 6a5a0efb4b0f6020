/**
 * Which MCP era a backend speaks, found once per backend and cached: a backend that answers
 * `server/discover` with 2026-07-28 (or a later revision) among its versions is modern; one that
 * refuses it speaks 2025-11-25 or older. The one place that decides it, for every direction and
 * backend transport: the era bridge (2026 client, 2025 backend), the reverse direction (2025
 * client, 2026-only backend) and the stdio multiplexer all ask here.
 */
import type { JsonRpcResponse } from '../../mcp/jsonrpc.js';

export const MODERN_REVISION = '2026-07-28';
/** The revision Moat speaks to a 2025-era backend on behalf of a 2026-07-28 client. */
export const LEGACY_REVISION = '2025-11-25';

export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

export type BackendEra = 'modern' | 'legacy';

/** The `server/discover` request Moat probes a backend with (2026-07-28 envelope). */
export function discoverProbe(id: number | string): {
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
        [META.protocolVersion]: MODERN_REVISION,
        [META.clientCapabilities]: {},
        [META.clientInfo]: { name: 'moat', version: '1' },
      },
    },
  };
}

/** Whether a `server/discover` result names the 2026-07-28 revision (or a later one). */
export function speaksModernRevision(result: unknown): result is Record<string, unknown> {
  if (typeof result !== 'object' || result === null) return false;
  const versions = (result as { supportedVersions?: unknown }).supportedVersions;
  return Array.isArray(versions) && versions.some((v) => typeof v === 'string' && v >= MODERN_REVISION);
}

/** The era a `server/discover` answer shows: a result listing 2026-07-28 is modern, anything else legacy. */
export function eraOfDiscoverAnswer(response: JsonRpcResponse | undefined): BackendEra {
  return speaksModernRevision(response?.result) ? 'modern' : 'legacy';
}

/**
 * The cached era of one backend. `detect` runs at most once at a time; a failed detection (the
 * backend unreachable) is not cached, so the next request tries again.
 */
export class EraCache<Context = void> {
  #era?: BackendEra;
  #pending?: Promise<BackendEra>;

  constructor(private readonly detect: (context: Context) => Promise<BackendEra>) {}

  /** The known era without waiting (undefined before the first detection finished). */
  get known(): BackendEra | undefined {
    return this.#era;
  }

  /** The era, detected on first use with the context of the request that needs it. */
  get(context: Context): Promise<BackendEra> {
    if (this.#era) return Promise.resolve(this.#era);
    this.#pending ??= this.detect(context).then(
      (era) => {
        this.#era = era;
        this.#pending = undefined;
        return era;
      },
      (err: unknown) => {
        this.#pending = undefined;
        throw err;
      },
    );
    return this.#pending;
  }
}
