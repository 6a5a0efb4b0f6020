/**
 * The authentication parts of a RunConfig built from flags: inbound OIDC validation, OAuth or a
 * bearer token towards a remote server, token exchange, and headers forwarded to the remote.
 * Secret values become references (SecretRefFn); files must exist (ExistingFn).
 */
import { checkClientMetadataUrl } from '../auth/outbound/client-metadata-url.js';
import type { RemoteAuthConfig, RunConfigInput, TokenExchangeConfig } from '../config/runconfig.js';
import { NS_PER_MS } from '../util/duration.js';
import { usageError } from '../util/errors.js';
import { dropUndefined } from './optional-fields.js';
import type { ExistingFn, SecretRefFn } from './run-build-context.js';
import type { ParsedRun } from './run-command.js';
import { used } from './run-flag-applicability.js';
import type { RunFlagName } from './run-flag-values.js';
import { headerMap, parseHttpUrl, parseResourceIndicator } from './run-values.js';

/** Flags that configure inbound OIDC (--thv-ca-bundle and --jwks-auth-token-file only refine it). */
const OIDC_FLAGS: readonly RunFlagName[] = [
  'oidc-issuer',
  'oidc-audience',
  'oidc-client-id',
  'oidc-client-secret',
  'oidc-introspection-url',
  'oidc-jwks-url',
  'oidc-scopes',
  'oidc-insecure-allow-http',
  'jwks-allow-private-ip',
  'resource-url',
];

/** A URL flag's value, checked as an http(s) URL and kept as written. */
function checkedUrl(flag: RunFlagName, value: string | undefined): string | undefined {
  return value === undefined ? undefined : (parseHttpUrl(flag, value), value);
}

export function oidcConfig(
  { flags, explicit }: ParsedRun,
  secretRef: SecretRefFn,
  existing: ExistingFn,
): RunConfigInput['oidc_config'] {
  if (used(explicit, OIDC_FLAGS).length === 0) return undefined;
  const issuer = flags.oidcIssuer === undefined ? undefined : parseHttpUrl('oidc-issuer', flags.oidcIssuer);
  if (issuer?.protocol === 'http:' && !flags.oidcInsecureAllowHttp) {
    throw usageError(
      '--oidc-issuer must use https:// (for local development add --oidc-insecure-allow-http)',
    );
  }
  const config: NonNullable<RunConfigInput['oidc_config']> = {
    Issuer: flags.oidcIssuer,
    Audience: flags.oidcAudience,
    JWKSURL: checkedUrl('oidc-jwks-url', flags.oidcJwksUrl),
    ClientID: flags.oidcClientId,
    ClientSecret: secretRef('oidcClientSecret', flags.oidcClientSecret),
    CACertPath: existing('thv-ca-bundle', flags.thvCaBundle),
    AuthTokenFile: existing('jwks-auth-token-file', flags.jwksAuthTokenFile),
    AllowPrivateIP: flags.jwksAllowPrivateIp || undefined,
    InsecureAllowHTTP: flags.oidcInsecureAllowHttp || undefined,
    IntrospectionURL: checkedUrl('oidc-introspection-url', flags.oidcIntrospectionUrl),
    ResourceURL: checkedUrl('resource-url', flags.resourceUrl),
    Scopes: flags.oidcScopes.length > 0 ? flags.oidcScopes : undefined,
  };
  return dropUndefined(config);
}

export function remoteAuthConfig(
  { flags }: ParsedRun,
  secretRef: SecretRefFn,
  existing: ExistingFn,
): RemoteAuthConfig {
  if (flags.remoteAuthTimeout <= 0) {
    throw usageError('--remote-auth-timeout: expected a duration greater than zero, such as 30s or 2m');
  }
  return dropUndefined({
    client_id: flags.remoteAuthClientId,
    client_metadata_url:
      flags.remoteAuthClientMetadataUrl === undefined
        ? undefined
        : checkClientMetadataUrl(flags.remoteAuthClientMetadataUrl, '--remote-auth-client-metadata-url'),
    client_secret: secretRef('remoteClientSecret', flags.remoteAuthClientSecret),
    client_secret_file: existing('remote-auth-client-secret-file', flags.remoteAuthClientSecretFile),
    scopes: flags.remoteAuthScopes.length > 0 ? flags.remoteAuthScopes : undefined,
    skip_browser: flags.remoteAuthSkipBrowser || undefined,
    timeout: flags.remoteAuthTimeout * NS_PER_MS,
    callback_port: flags.remoteAuthCallbackPort,
    resource:
      flags.remoteAuthResource === undefined
        ? undefined
        : parseResourceIndicator('remote-auth-resource', flags.remoteAuthResource),
    issuer: checkedUrl('remote-auth-issuer', flags.remoteAuthIssuer),
    authorize_url: checkedUrl('remote-auth-authorize-url', flags.remoteAuthAuthorizeUrl),
    token_url: checkedUrl('remote-auth-token-url', flags.remoteAuthTokenUrl),
    scope_param_name: flags.remoteAuthScopeParamName,
    bearer_token: secretRef('bearerToken', flags.remoteAuthBearerToken),
    bearer_token_file: existing('remote-auth-bearer-token-file', flags.remoteAuthBearerTokenFile),
    enabled: flags.remoteAuth || undefined,
  });
}

export function tokenExchangeConfig(
  { flags }: ParsedRun,
  secretRef: SecretRefFn,
  existing: ExistingFn,
): TokenExchangeConfig | undefined {
  if (flags.tokenExchangeUrl === undefined) return undefined;
  parseHttpUrl('token-exchange-url', flags.tokenExchangeUrl);
  return dropUndefined({
    token_url: flags.tokenExchangeUrl,
    client_id: flags.tokenExchangeClientId,
    client_secret: secretRef('tokenExchangeClientSecret', flags.tokenExchangeClientSecret),
    client_secret_file: existing('token-exchange-client-secret-file', flags.tokenExchangeClientSecretFile),
    audience: flags.tokenExchangeAudience,
    scopes: flags.tokenExchangeScopes.length > 0 ? flags.tokenExchangeScopes : undefined,
    subject_token_type: flags.tokenExchangeSubjectTokenType,
    header_strategy: flags.tokenExchangeHeaderName === undefined ? ('replace' as const) : ('custom' as const),
    external_token_header_name: flags.tokenExchangeHeaderName,
  });
}

export function headerForward({ flags }: ParsedRun): Partial<RunConfigInput> {
  const plain = headerMap('remote-forward-headers', flags.remoteForwardHeaders, 'Name=Value');
  const fromSecret = headerMap(
    'remote-forward-headers-secret',
    flags.remoteForwardHeadersSecret,
    'Name=secret-name',
  );
  if (!plain && !fromSecret) return {};
  return {
    header_forward: dropUndefined({ add_plaintext_headers: plain, add_headers_from_secret: fromSecret }),
  };
}
