import { describe, expect, it } from 'vitest';
import { checkResponseIssuer } from './issuer-check.js';

const issuer = 'https://as.example/tenant';
const callback = (iss?: string): URL => {
  const url = new URL('http://127.0.0.1:8666/callback?code=c&state=s');
  if (iss !== undefined) url.searchParams.set('iss', iss);
  return url;
};
const advertised = { issuer, authorization_response_iss_parameter_supported: true };
const silent = { issuer };

describe('checkResponseIssuer (RFC 9207)', () => {
  it('accepts the exact issuer, advertised or not', () => {
    expect(checkResponseIssuer(callback(issuer), advertised, true).searchParams.get('iss')).toBe(issuer);
    expect(checkResponseIssuer(callback(issuer), silent, true).searchParams.get('iss')).toBe(issuer);
  });

  it('accepts a response without iss when the server does not announce it', () => {
    expect(checkResponseIssuer(callback(), silent, true).searchParams.has('iss')).toBe(false);
  });

  it('refuses a missing iss when the server announces it', () => {
    expect(() => checkResponseIssuer(callback(), advertised, true)).toThrow(
      /announces the iss parameter \(RFC 9207\) but its authorization response has none: refused, no token requested/,
    );
  });

  it.each([
    ['another server', 'https://evil.example', advertised],
    ['another server, not announced', 'https://evil.example', silent],
    ['a trailing slash', `${issuer}/`, advertised],
    ['another case', 'https://AS.example/tenant', advertised],
    ['an explicit default port', 'https://as.example:443/tenant', silent],
  ])('refuses %s (no normalization)', (_what, iss, metadata) => {
    expect(() => checkResponseIssuer(callback(iss), metadata, true)).toThrow(
      /not from "https:\/\/as\.example\/tenant" where the login started \(RFC 9207; a possible mix-up attack\)/,
    );
  });

  it('drops iss when the issuer is not known (endpoints given by hand)', () => {
    const redeemed = checkResponseIssuer(callback('https://real-issuer.example'), advertised, false);
    expect(redeemed.searchParams.has('iss')).toBe(false);
    expect(redeemed.searchParams.get('code')).toBe('c');
  });
});
