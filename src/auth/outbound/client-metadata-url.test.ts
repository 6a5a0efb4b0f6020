import { describe, expect, it } from 'vitest';
import { checkClientMetadataUrl, clientMetadataUrlProblem } from './client-metadata-url.js';

describe('clientMetadataUrlProblem (CIMD URL rules)', () => {
  it.each([
    'https://client.example/oauth/moat.json',
    'https://client.example:8443/moat',
    'https://client.example/moat.json?v=1',
  ])('accepts %s', (value) => expect(clientMetadataUrlProblem(value)).toBeUndefined());

  it.each([
    ['http://client.example/moat.json', /https URL/],
    ['https://client.example', /path to the document/],
    ['https://client.example/', /path to the document/],
    ['https://client.example/moat.json#x', /fragment/],
    ['https://user:pw@client.example/moat.json', /user name or password/],
    ['https://client.example/a/../moat.json', /'\.' or '\.\.' segments/],
    ['https://client.example/./moat.json', /'\.' or '\.\.' segments/],
    ['https://client.example/a/%2E%2E/moat.json', /'\.' or '\.\.' segments/],
    ['client.example/moat.json', /not a valid URL/],
  ])('refuses %s', (value, problem) => expect(clientMetadataUrlProblem(value)).toMatch(problem));

  it('names the flag in the usage error', () => {
    expect(() => checkClientMetadataUrl('http://x.example/m', '--remote-auth-client-metadata-url')).toThrow(
      /^--remote-auth-client-metadata-url: invalid value "http:\/\/x\.example\/m": it must be an https URL/,
    );
  });
});
