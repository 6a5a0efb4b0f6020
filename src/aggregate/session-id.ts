/**
 * Front session ids that carry what it takes to rebuild the session on another replica of the
 * aggregate: the protocol version the client asked for and the client capabilities members may
 * use (sampling, elicitation, roots), with a random nonce, sealed by an HMAC under a key every
 * replica shares. A replica that never saw the session checks the seal and replays the
 * `initialize` these describe; an id whose seal does not hold is unknown (404), so nobody without
 * the key can make an id that claims capabilities its client did not declare. The id is never
 * shown to clients: Moat's proxy maps it to a session id of its own, bound to the principal.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ClientCapabilities } from '@modelcontextprotocol/server';
import { forwardedCapabilities } from './member-client.js';

/** What an `initialize` declared that the aggregate needs to serve the session again. */
export interface SessionSeed {
  protocolVersion: string;
  capabilities: ClientCapabilities;
}

const VERSION = 'a1';
/** Longer ids are refused: they could only come from capabilities nobody declares. */
const MAX_ID_LENGTH = 2048;

export class SessionIds {
  private readonly key: Buffer;

  /** `key`: shared by every replica of the aggregate; random (this aggregator alone) when absent. */
  constructor(key?: string | Uint8Array) {
    this.key = key === undefined ? randomBytes(32) : Buffer.from(key);
    if (this.key.length < 16) throw new Error('the aggregate session key must be at least 16 bytes');
  }

  /** A new id for a session that declared `seed`. */
  issue(seed: SessionSeed): string {
    const payload = Buffer.from(
      JSON.stringify({
        n: randomBytes(16).toString('base64url'),
        p: seed.protocolVersion,
        c: forwardedCapabilities(seed.capabilities),
      }),
    ).toString('base64url');
    return `${VERSION}.${payload}.${this.mac(payload)}`;
  }

  /** What a sealed id declares; undefined when the id is not one this key sealed. */
  open(id: string): SessionSeed | undefined {
    if (id.length > MAX_ID_LENGTH) return undefined;
    const [version, payload, mac, extra] = id.split('.');
    if (version !== VERSION || !payload || !mac || extra !== undefined) return undefined;
    // Compared as text: decoding base64 would let several spellings of one seal pass.
    const expected = Buffer.from(this.mac(payload));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const seed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
        p?: unknown;
        c?: unknown;
      };
      if (typeof seed.p !== 'string' || typeof seed.c !== 'object' || seed.c === null) return undefined;
      return { protocolVersion: seed.p, capabilities: seed.c };
    } catch {
      return undefined;
    }
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.key).update(`${VERSION}.${payload}`).digest('base64url');
  }
}
