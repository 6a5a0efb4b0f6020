/**
 * The URL of a client ID metadata document (CIMD, draft-ietf-oauth-client-id-metadata-document):
 * an authorization server that supports it takes the URL itself as the client_id and fetches the
 * client's metadata (name, redirect URIs) from it, so no registration is needed. The draft's rules
 * for that URL are checked here.
 */
import { usageError } from '../../util/errors.js';

const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:[/?#]|$)/i;

/** What is wrong with a client metadata URL, or undefined when it is usable. */
export function clientMetadataUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'not a valid URL';
  }
  if (url.protocol !== 'https:') return 'it must be an https URL';
  if (url.username || url.password) return 'it must not contain a user name or password';
  if (value.includes('#')) return 'it must not contain a fragment (#...)';
  if (url.pathname === '/' || url.pathname === '') return 'it must contain a path to the document';
  if (DOT_SEGMENT.test(value.slice(url.origin.length)))
    return "its path must not contain '.' or '..' segments";
  return undefined;
}

/** Throws a usage error naming `flag` when the URL breaks the CIMD rules. */
export function checkClientMetadataUrl(value: string, flag: string): string {
  const problem = clientMetadataUrlProblem(value);
  if (problem) {
    throw usageError(
      `${flag}: invalid value ${JSON.stringify(value)}: ${problem} (a client ID metadata document URL is https, with a path, without a fragment)`,
    );
  }
  return value;
}
