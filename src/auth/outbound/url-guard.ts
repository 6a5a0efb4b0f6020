/**
 * SSRF guard for URLs Moat learns from a remote server (protected-resource metadata, authorization
 * server metadata): the remote must not steer Moat's credentials toward a more private place than
 * itself. https is required unless the remote itself is plain http on loopback (local development);
 * link-local and cloud metadata addresses (in any spelling: util/net.ts) are never allowed; private addresses only when the
 * remote is private too. Host names are not resolved here.
 */
import { isIP } from 'node:net';
import { isPrivateAddress } from '../inbound/private-address.js';
import { runtimeError } from '../../util/errors.js';
import { isLoopbackHost, isMetadataHost } from '../../util/net.js';

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

function isPrivateHost(host: string): boolean {
  return isLoopbackHost(host) || (isIP(host) !== 0 && isPrivateAddress(host));
}

/** Checks a URL discovered from `remote`'s metadata; `what` names it in the error. */
export function checkDiscoveredUrl(url: string, remote: string, what: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw runtimeError(`${what} ${JSON.stringify(url)} is not a valid URL`);
  }
  const remoteUrl = new URL(remote);
  const remoteLocalHttp = remoteUrl.protocol === 'http:' && isLoopbackHost(hostOf(remoteUrl));
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && remoteLocalHttp)) {
    throw runtimeError(`${what} ${url} must use https`);
  }
  const host = hostOf(parsed);
  if (isMetadataHost(host)) {
    throw runtimeError(`${what} ${url} points at a link-local or cloud metadata address; refused`);
  }
  if (isPrivateHost(host) && !isPrivateHost(hostOf(remoteUrl))) {
    throw runtimeError(
      `${what} ${url} points at a private address but the remote server ${remote} is public; refused`,
    );
  }
  return parsed;
}

/** True when openid-client must be told to allow plain-http requests (loopback development only). */
export function needsInsecureHttp(...urls: Array<string | undefined>): boolean {
  return urls.some((u) => u !== undefined && new URL(u).protocol === 'http:');
}
