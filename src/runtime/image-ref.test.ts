import { describe, expect, it } from 'vitest';
import { isFloatingImageRef, isValidImageRef, parseImageRef } from './image-ref.js';

describe('image references', () => {
  it('separates repository, tag and digest (a registry port is not a tag)', () => {
    expect(parseImageRef('ghcr.io/org/srv:1.2')).toEqual({ repository: 'ghcr.io/org/srv', tag: '1.2' });
    expect(parseImageRef('localhost:5000/srv')).toEqual({ repository: 'localhost:5000/srv' });
    expect(parseImageRef('srv@sha256:abc')).toEqual({ repository: 'srv', digest: 'sha256:abc' });
  });

  it('pulls latest and untagged references every time, not fixed tags or digests', () => {
    expect(isFloatingImageRef('srv')).toBe(true);
    expect(isFloatingImageRef('srv:latest')).toBe(true);
    expect(isFloatingImageRef('localhost:5000/srv')).toBe(true);
    expect(isFloatingImageRef('srv:1')).toBe(false);
    expect(isFloatingImageRef('srv:latest@sha256:abc')).toBe(false);
  });

  it('validates the characters of a reference', () => {
    expect(isValidImageRef('ghcr.io/org/srv:v1.0_RC')).toBe(true);
    expect(isValidImageRef('Upper/x')).toBe(false);
    expect(isValidImageRef('x y')).toBe(false);
    expect(isValidImageRef('')).toBe(false);
  });
});
