import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemorySingleUse } from './single-use.js';
import { MAX_STATE_CHARS, RequestStateCodec, requestDigest, type StateClaims } from './state.js';

let now = 1_000_000;
const clock = () => now;
const key = randomBytes(32);
const codec = new RequestStateCodec(key, clock);
const digest = requestDigest('tools/call', { name: 'book', arguments: { when: 'today', seats: 2 } });
const claims = (over: Partial<StateClaims> = {}): StateClaims => ({
  id: 'round-1',
  principal: '["https://issuer","alice"]',
  exp: now + 60_000,
  digest,
  ...over,
});
const expected = { principal: '["https://issuer","alice"]', digest };

/** The state with one bit of its sealed bytes flipped. */
function flipOneBit(token: string, byte: number): string {
  const raw = Buffer.from(token.slice(3), 'base64url');
  raw[byte % raw.length] = (raw[byte % raw.length] as number) ^ 0x01;
  return `m1.${raw.toString('base64url')}`;
}

describe('request state codec', () => {
  it('opens what it sealed, and the client cannot read the round id or principal', () => {
    const token = codec.seal(claims());
    expect(token).toMatch(/^m1\.[A-Za-z0-9_-]+$/);
    expect(Buffer.from(token.slice(3), 'base64url').toString('latin1')).not.toContain('round-1');
    expect(token).not.toContain('alice');
    expect(codec.open(token, expected)).toEqual({ claims: claims() });
    // Two seals of the same claims differ (random IV).
    expect(codec.seal(claims())).not.toBe(token);
  });

  it('refuses any single flipped bit, anywhere in the state, as tampered', () => {
    const token = codec.seal(claims());
    const length = Buffer.from(token.slice(3), 'base64url').length;
    for (const byte of [0, 11, 12, Math.floor(length / 2), length - 17, length - 1]) {
      expect(codec.open(flipOneBit(token, byte), expected)).toEqual({ refusal: 'tampered' });
    }
    expect(codec.open(`${token}-TAMPERED`, expected)).toEqual({ refusal: 'tampered' });
  });

  it('carries a server’s own state inside the seal, unreadable from outside', () => {
    const token = codec.seal({ ...claims(), server: 'the-server-state' });
    expect(token).not.toContain('the-server-state');
    const opened = codec.open(token, expected);
    expect('claims' in opened && opened.claims.server).toBe('the-server-state');
  });

  it('refuses a state sealed under another key as tampered, and junk as malformed', () => {
    const other = new RequestStateCodec(randomBytes(32), clock);
    expect(codec.open(other.seal(claims()), expected)).toEqual({ refusal: 'tampered' });
    for (const junk of [
      undefined,
      42,
      '',
      'm1.',
      'm1.!!!',
      'x1.abc',
      `m1.${'A'.repeat(MAX_STATE_CHARS)}`,
      { id: 1 },
    ]) {
      expect(codec.open(junk, expected)).toEqual({ refusal: 'malformed' });
    }
  });

  it('refuses an expired state, another principal, and another request', () => {
    const token = codec.seal(claims({ exp: now + 1000 }));
    expect(codec.open(token, { ...expected, principal: '["https://issuer","bob"]' })).toEqual({
      refusal: 'other-principal',
    });
    const otherArgs = requestDigest('tools/call', { name: 'book', arguments: { when: 'today', seats: 3 } });
    expect(codec.open(token, { ...expected, digest: otherArgs })).toEqual({ refusal: 'other-request' });
    now += 1000;
    expect(codec.open(token, expected)).toEqual({ refusal: 'expired' });
  });

  it('digests the asked request only: retry fields and _meta do not count, key order does not matter', () => {
    const retry = requestDigest('tools/call', {
      arguments: { seats: 2, when: 'today' },
      name: 'book',
      inputResponses: { 'elicitation-1': { action: 'accept' } },
      requestState: 'm1.xyz',
      _meta: { 'io.modelcontextprotocol/clientCapabilities': {} },
    });
    expect(retry).toBe(digest);
    expect(requestDigest('prompts/get', { name: 'book', arguments: { when: 'today', seats: 2 } })).not.toBe(
      digest,
    );
  });

  it('refuses a key of the wrong size', () => {
    expect(() => new RequestStateCodec(randomBytes(16))).toThrow(/32 bytes/);
  });
});

describe('single use (memory)', () => {
  it('lets an id be consumed once until its state has expired, then forgets it', async () => {
    const used = new MemorySingleUse(clock);
    try {
      expect(await used.consume('a', now + 100)).toBe(true);
      expect(await used.consume('a', now + 100)).toBe(false);
      expect(await used.consume('b', now + 100)).toBe(true);
      now += 100;
      used.sweep();
      expect(used.size).toBe(0);
    } finally {
      used.close();
    }
  });
});
