/**
 * Inbound-authentication settings resolved from a RunConfig: the oidc_config block (ToolHive's
 * Go field names), jwks_auth_token_file and thv_ca_bundle. Files and secrets are read here, once,
 * at start; URLs are checked so a bad flag fails the start with a message naming it.
 */
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { DEFAULTS } from '../../config/defaults.js';
import type { OidcConfig, RunConfig } from '../../config/runconfig.js';
import { errorMessage, usageError } from '../../util/errors.js';
import { isPrivateAddress } from './private-address.js';

export interface InboundAuthSettings {
  issuer?: string;
  audience?: string;
  jwksUrl?: string;
  introspectionUrl?: string;
  clientId?: string;
  /** Resolved introspection client secret (never logged or persisted). */
  clientSecret?: string;
  /** Explicit RFC 9728 resource URL (--resource-url). */
  resourceUrl?: string;
  /** Scopes advertised in the metadata document and the challenge. */
  scopesSupported: string[];
  /** Scopes every token must carry (only those configured explicitly with --oidc-scopes). */
  requiredScopes: string[];
  allowPrivateIp: boolean;
  allowHttp: boolean;
  /** Bearer token for discovery and JWKS requests (--jwks-auth-token-file). */
  idpAuthToken?: string;
  /** PEM CA bundle for TLS to the identity provider (--thv-ca-bundle, else oidc_config.CACertPath). */
  caBundle?: string;
  /** Claim names whose values become the identity's groups (from the authz config). */
  groupClaimName?: string;
  roleClaimName?: string;
}

export interface ResolveOptions {
  /** Resolves a secret reference ("NAME,target=x") to its value. */
  resolveSecret?: (ref: string) => Promise<string>;
  env?: NodeJS.ProcessEnv;
  groupClaimName?: string;
  roleClaimName?: string;
}

/** Environment fallback for the introspection client secret (ToolHive: TOOLHIVE_OIDC_CLIENT_SECRET). */
export const CLIENT_SECRET_ENV = 'MOAT_OIDC_CLIENT_SECRET';

/** Whether an OIDC section names a way to validate tokens (the rest only refines it). */
export function configuresInboundAuth(oidc: OidcConfig | undefined): boolean {
  return Boolean(oidc && (oidc.Issuer || oidc.JWKSURL || oidc.IntrospectionURL));
}

/** Undefined when the RunConfig configures no inbound authentication. */
export async function resolveInboundAuth(
  config: Pick<RunConfig, 'oidc_config' | 'jwks_auth_token_file' | 'thv_ca_bundle'>,
  options: ResolveOptions = {},
): Promise<InboundAuthSettings | undefined> {
  const oidc: OidcConfig | undefined = config.oidc_config;
  if (!oidc) return undefined;
  if (!configuresInboundAuth(oidc)) {
    if (Object.values(oidc).some((v) => v !== undefined && v !== false)) {
      throw usageError(
        'inbound authentication needs --oidc-issuer, --oidc-jwks-url or --oidc-introspection-url ' +
          '(oidc_config.Issuer, JWKSURL or IntrospectionURL); the other --oidc-* flags and --resource-url only refine it',
      );
    }
    return undefined;
  }
  const allowHttp = oidc.InsecureAllowHTTP === true;
  const allowPrivateIp = oidc.AllowPrivateIP === true;
  const checkUrl = (url: string | undefined, flag: string): string | undefined => {
    if (url === undefined || url === '') return undefined;
    return checkIdpUrl(url, flag, { allowHttp, allowPrivateIp });
  };
  const issuer = checkUrl(oidc.Issuer, '--oidc-issuer')?.replace(/\/+$/, '');
  const jwksUrl = checkUrl(oidc.JWKSURL, '--oidc-jwks-url');
  const introspectionUrl = checkUrl(oidc.IntrospectionURL, '--oidc-introspection-url');
  const resourceUrl = oidc.ResourceURL ? checkResourceUrl(oidc.ResourceURL) : undefined;

  const env = options.env ?? process.env;
  let clientSecret: string | undefined;
  if (oidc.ClientSecret) {
    if (!options.resolveSecret) {
      throw usageError('oidc_config.ClientSecret is a secret reference but no secrets provider is available');
    }
    clientSecret = await options.resolveSecret(oidc.ClientSecret);
  } else if (env[CLIENT_SECRET_ENV]) {
    clientSecret = env[CLIENT_SECRET_ENV];
  }

  const caPath = config.thv_ca_bundle || oidc.CACertPath;
  const tokenPath = config.jwks_auth_token_file || oidc.AuthTokenFile;
  const scopes = (oidc.Scopes ?? []).filter((s) => s !== '');
  return {
    issuer,
    audience: oidc.Audience || undefined,
    jwksUrl,
    introspectionUrl,
    clientId: oidc.ClientID || undefined,
    clientSecret,
    resourceUrl,
    scopesSupported: scopes.length > 0 ? scopes : [...DEFAULTS.oidcScopes],
    requiredScopes: scopes,
    allowHttp,
    allowPrivateIp,
    idpAuthToken: tokenPath ? await readSmallFile(tokenPath, '--jwks-auth-token-file', true) : undefined,
    caBundle: caPath ? await readCaBundle(caPath) : undefined,
    groupClaimName: options.groupClaimName,
    roleClaimName: options.roleClaimName,
  };
}

/** Checks an identity-provider URL against the scheme and private-address rules. */
export function checkIdpUrl(
  url: string,
  flag: string,
  rules: { allowHttp: boolean; allowPrivateIp: boolean },
): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw usageError(`${flag}: ${JSON.stringify(url)} is not a valid URL`);
  }
  if (parsed.protocol === 'http:' && !rules.allowHttp) {
    throw usageError(
      `${flag}: ${url} uses plain http; identity-provider URLs must use https (for local development only, add --oidc-insecure-allow-http)`,
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw usageError(`${flag}: ${url} must be an https URL`);
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (!rules.allowPrivateIp && isIP(host) !== 0 && isPrivateAddress(host)) {
    throw usageError(
      `${flag}: ${url} points at a private or loopback address; add --jwks-allow-private-ip if the identity provider really lives there`,
    );
  }
  return url;
}

function checkResourceUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw usageError(`--resource-url: ${JSON.stringify(url)} is not a valid URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw usageError(`--resource-url: ${url} must be an http or https URL`);
  }
  if (parsed.hash || parsed.search) {
    throw usageError(`--resource-url: ${url} must not have a query or fragment (RFC 8707)`);
  }
  return url;
}

async function readSmallFile(
  path: string,
  flag: string,
  trim: boolean,
  maxBytes = 64 * 1024,
): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw usageError(`${flag}: cannot read ${path}: ${errorMessage(err)}`);
  }
  if (text.length > maxBytes) throw usageError(`${flag}: ${path} is larger than ${maxBytes} bytes`);
  const value = trim ? text.trim() : text;
  if (value === '') throw usageError(`${flag}: ${path} is empty`);
  return value;
}

async function readCaBundle(path: string): Promise<string> {
  const pem = await readSmallFile(path, '--thv-ca-bundle', false, 4 * 1024 * 1024);
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw usageError(`--thv-ca-bundle: ${path} holds no PEM certificate`);
  }
  return pem;
}
