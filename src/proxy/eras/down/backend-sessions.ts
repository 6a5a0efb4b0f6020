/**
 * The backend sessions Moat keeps for 2026-07-28 clients of a 2025-era HTTP server: one per
 * principal (issuer + subject; anonymous callers are one principal of their own), so no state on
 * the server is shared between users. They live in the session store under an id derived from
 * the principal, so with Redis every replica uses the same backend session, and the store's
 * bound and sliding idle expiry apply to them as to client sessions. Clients never name them:
 * their ids start with `bridge:`, which no client-facing session id does.
 */
import { createHash } from 'node:crypto';
import type { Identity } from '../../../mcp/identity.js';
import { ownerFields, principalOf } from '../../sessions/binding.js';
import type { SessionRecord, SessionStore } from '../../types.js';

export const BRIDGE_SESSION_PREFIX = 'bridge:';

/** A backend session as the bridge uses it. */
export interface BackendSession {
  /** The backend's own Mcp-Session-Id. */
  backendSessionId: string;
  /** The backend's initialize result (capabilities, serverInfo, instructions, version). */
  init: Record<string, unknown>;
  /** The most verbose log level set on the backend session, if any. */
  logLevel?: string;
}

/** What opening a backend session needs from the transport: initialize, and end one that lost a race. */
export interface BackendSessionOpener {
  open(identity: Identity): Promise<BackendSession>;
  close(identity: Identity, backendSessionId: string): Promise<void>;
}

export function bridgeSessionId(identity: Identity): string {
  const principal = principalOf(identity) ?? 'anonymous';
  return BRIDGE_SESSION_PREFIX + createHash('sha256').update(principal).digest('hex');
}

function fromRecord(record: SessionRecord): BackendSession | undefined {
  if (record.backendSessionId === undefined) return undefined;
  let init: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(record.metadata.init ?? '{}');
    if (typeof parsed === 'object' && parsed !== null) init = parsed as Record<string, unknown>;
  } catch {
    // A damaged record: the session is still usable, discover answers without capabilities.
  }
  return {
    backendSessionId: record.backendSessionId,
    init,
    ...(record.metadata.log_level ? { logLevel: record.metadata.log_level } : {}),
  };
}

export class BackendSessions {
  /** Opening in progress per store id (one initialize per principal at a time in this process). */
  readonly #opening = new Map<string, Promise<BackendSession>>();

  constructor(private readonly store: SessionStore) {}

  /** The principal's backend session, opened (initialize) through `opener` when it has none. */
  async get(identity: Identity, opener: BackendSessionOpener): Promise<BackendSession> {
    const id = bridgeSessionId(identity);
    const record = await this.store.get(id);
    const known = record && fromRecord(record);
    if (known) return known;
    let opening = this.#opening.get(id);
    if (!opening) {
      opening = this.#open(id, identity, opener).finally(() => this.#opening.delete(id));
      this.#opening.set(id, opening);
    }
    return opening;
  }

  async #open(id: string, identity: Identity, opener: BackendSessionOpener): Promise<BackendSession> {
    const session = await opener.open(identity);
    const now = Date.now();
    const record: SessionRecord = {
      id,
      backendSessionId: session.backendSessionId,
      createdAt: now,
      lastAccess: now,
      ...ownerFields(identity),
      metadata: { transport: 'era-bridge', init: JSON.stringify(session.init) },
    };
    try {
      await this.store.create(record);
      return session;
    } catch (err) {
      // Another replica stored one first: use it, and end ours at the backend.
      const winner = await this.store.get(id);
      const theirs = winner && fromRecord(winner);
      if (!theirs) throw err;
      await opener.close(identity, session.backendSessionId).catch(() => undefined);
      return theirs;
    }
  }

  /** Records the log level now set on the backend session. */
  async setLogLevel(identity: Identity, session: BackendSession, level: string): Promise<void> {
    session.logLevel = level;
    const id = bridgeSessionId(identity);
    const record = await this.store.get(id);
    if (record?.backendSessionId !== session.backendSessionId) return;
    await this.store.update(id, { metadata: { ...record.metadata, log_level: level } });
  }

  /** The backend said the session is gone (404): forget it, so the next get() opens a new one. */
  async forget(identity: Identity, backendSessionId: string): Promise<void> {
    const id = bridgeSessionId(identity);
    const record = await this.store.get(id);
    if (record?.backendSessionId === backendSessionId) await this.store.delete(id);
  }
}
