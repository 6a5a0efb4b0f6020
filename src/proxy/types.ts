/**
 * Contracts shared by the proxy's own parts: the HTTP edge, the transports on both sides and the
 * session stores. What policies and observers share lives below, in src/mcp/.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { RunConfig } from '../config/runconfig.js';
import type { ExchangeRecord } from '../mcp/exchange.js';
import type { Identity } from '../mcp/identity.js';
import type { MemberResolver } from '../mcp/members.js';
import type { MessagePolicy } from '../mcp/policy.js';
import type { StdioPipes } from '../mcp/stdio.js';
import type { TracePropagation } from '../telemetry/trace-context.js';
import type { InputBroker } from './eras/down/seam.js';

// ---------------------------------------------------------------------------------------------
// Sessions

export interface SessionRecord {
  /** Client-facing session ID (cryptographically random). */
  id: string;
  /** The backend's own session ID, when the backend minted one. */
  backendSessionId?: string;
  createdAt: number;
  /** Last access (ms since epoch); sliding expiry counts from here. */
  lastAccess: number;
  /** Negotiated MCP protocol version, when known. */
  protocolVersion?: string;
  /** Who created the session (issuer + subject, see sessions/binding.ts); absent when anonymous. */
  principal?: string;
  /** Free-form string metadata (backend URL, transport, ...). */
  metadata: Record<string, string>;
}

export interface SessionStore {
  /** Stores a new session; fails when the id is taken (set-if-absent, atomic in every store). */
  create(record: SessionRecord): Promise<void>;
  /** Loads a session and refreshes its sliding TTL; undefined when unknown or expired. */
  get(id: string): Promise<SessionRecord | undefined>;
  /** Merges fields into an existing session (no-op when it is gone). */
  update(id: string, patch: Partial<Omit<SessionRecord, 'id'>>): Promise<void>;
  /** Deletes a session; deleting an unknown one is not an error. */
  delete(id: string): Promise<void>;
  /** Why the store cannot serve now (e.g. Redis not answering), or undefined when it can. */
  problem?(): Promise<string | undefined>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Backends: what the proxy forwards to.

export type BackendSpec =
  /**
   * A streamable-HTTP or SSE server (container target or remote URL). `memberOf`, for an aggregate
   * endpoint (`moat group serve`), says which member workload an exposed name belongs to:
   * `(kind: 'tool' | 'prompt' | 'resource', name: string) => string | undefined` (a tool or prompt
   * name, or a resource URI; undefined when unknown). Cedar reads it as `context.backend`, audit as
   * `target.backend`, spans as `moat.backend`; without it nothing is resolved.
   */
  | {
      kind: 'http';
      url: string;
      transport: 'streamable-http' | 'sse';
      remote: boolean;
      memberOf?: MemberResolver;
    }
  /**
   * A stdio server; `connect` is called again to re-attach after the pipes end. `startProcess`,
   * when the backend can, starts another process of the same server (a container workload: an
   * exec of the container's own command inside it); a dual-era server's 2026-07-28 clients are
   * served natively by such a second process (stdio/era-process.ts). It is called again to
   * restart that process when it ends; its `close()` ends it.
   */
  | { kind: 'stdio'; connect(): Promise<StdioPipes>; startProcess?(): Promise<StdioPipes> };

export type HttpBackend = Extract<BackendSpec, { kind: 'http' }>;
export type StdioBackend = Extract<BackendSpec, { kind: 'stdio' }>;

/** What every transport handler is built from. */
export interface TransportOptions {
  config: RunConfig;
  /** The message policies, in client-message order (see chain.ts). */
  policies: readonly MessagePolicy[];
  sessions: SessionStore;
  sessionTtlMs: number;
  /** How long an HTTP backend may take to answer a POST (headers and whole body) or open a stream. */
  upstreamTimeoutMs: number;
  /** Interval of `:` keep-alive comments on idle SSE streams. */
  keepAliveMs: number;
  logger: Logger;
  /** Trace context for the backend, when spans are exported (absent: the hot path is unchanged). */
  tracePropagation?: TracePropagation;
  /** Carries backend input requests of bridged 2026-07-28 requests to clients (MRTR, eras/down/seam.ts). */
  inputBroker?: InputBroker;
}

// ---------------------------------------------------------------------------------------------
// The HTTP edge hands each accepted request to middlewares and then to a transport handler.

export interface EdgeRequest {
  req: IncomingMessage;
  res: ServerResponse;
  /** Who is calling; the synthetic local user until an authentication middleware replaces it. */
  identity: Identity;
  clientAddress: string;
  /** Base URL clients reach this proxy at, honoring X-Forwarded-* only when they are trusted. */
  externalBaseUrl: string;
  /** Reads the whole body, enforcing the size limit (413) and read timeout (408). Cached after the first call. */
  readBody(): Promise<Buffer>;
  annotations: ExchangeRecord;
}

/** Around-style middleware at the edge (authentication, audit, ...); call next() to continue. */
export type EdgeMiddleware = (request: EdgeRequest, next: () => Promise<void>) => Promise<void>;

/** Serves the MCP endpoints for one backend (the stdio bridge, or the HTTP forwarder). */
export interface TransportHandler {
  handle(request: EdgeRequest): Promise<void>;
  close(): Promise<void>;
}
