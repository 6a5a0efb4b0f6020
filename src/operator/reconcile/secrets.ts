/**
 * Every Secret key a proxy pod reads, with how it reaches the pod. One list feeds the RunConfig
 * (which names each secret), the Deployment (which maps it to env from a `secretKeyRef`) and the
 * validation (which checks that it exists), so the three cannot disagree.
 *
 * A secret called NAME in the RunConfig is read by the proxy from env `MOAT_SECRET_<NAME>` (the
 * `environment` secrets provider). NAMEs are fixed per purpose, plus the item index for lists, so
 * they are valid env suffixes and never collide.
 */
import type { SecretKeyRef } from '../crd/index.js';
import type { ProxyInputs } from './inputs.js';

/** The `environment` secrets provider's prefix (src/secrets/environment.ts; the operator may not import it). */
export const SECRET_ENV_PREFIX = 'MOAT_SECRET_';
/** Read by the Redis session store (src/proxy/sessions/redis.ts). */
export const REDIS_PASSWORD_ENV = 'MOAT_SESSION_REDIS_PASSWORD';

export type SecretPurpose =
  | 'forwarded header'
  | 'external auth header'
  | 'bearer token'
  | 'token exchange client secret'
  | 'OIDC client secret'
  | 'Redis password'
  | 'Redis CA certificate';

export interface ProxySecret {
  ref: SecretKeyRef;
  purpose: SecretPurpose;
  /** The field that names the Secret, for messages. */
  field: string;
  /** How the pod gets it: env var (for the secrets provider or Redis) or the CA volume. */
  delivery: { env: string; secretName?: string } | { volume: 'redis-ca' };
}

function viaProvider(name: string): ProxySecret['delivery'] {
  return { env: `${SECRET_ENV_PREFIX}${name}`, secretName: name };
}

/** The secret NAMEs the RunConfig uses (`MOAT_SECRET_<NAME>`). */
export const SECRET_NAMES = {
  forwardedHeader: (index: number) => `HEADER_FORWARD_${index}`,
  externalAuthHeader: 'EXTERNAL_AUTH_HEADER',
  bearerToken: 'REMOTE_BEARER_TOKEN',
  tokenExchangeClientSecret: 'TOKEN_EXCHANGE_CLIENT_SECRET',
  oidcClientSecret: 'OIDC_CLIENT_SECRET',
} as const;

/**
 * The Secret keys the pod of this proxy reads, in a stable order. Objects the caller did not find
 * contribute nothing (their absence is reported by validation).
 */
export function proxySecrets(inputs: ProxyInputs): ProxySecret[] {
  const { spec } = inputs.proxy;
  const out: ProxySecret[] = [];
  (spec.headerForward?.addHeadersFromSecret ?? []).forEach((header, index) => {
    out.push({
      ref: header.valueSecretRef,
      purpose: 'forwarded header',
      field: `spec.headerForward.addHeadersFromSecret[${index}] (${header.headerName})`,
      delivery: viaProvider(SECRET_NAMES.forwardedHeader(index)),
    });
  });
  const external = inputs.externalAuthConfig;
  if (external) {
    const field = `MCPExternalAuthConfig ${external.metadata.name ?? ''}`;
    const { headerInjection, bearerToken, tokenExchange } = external.spec;
    if (external.spec.type === 'headerInjection' && headerInjection) {
      out.push({
        ref: headerInjection.valueSecretRef,
        purpose: 'external auth header',
        field: `${field} headerInjection.valueSecretRef`,
        delivery: viaProvider(SECRET_NAMES.externalAuthHeader),
      });
    }
    if (external.spec.type === 'bearerToken' && bearerToken) {
      out.push({
        ref: bearerToken.tokenSecretRef,
        purpose: 'bearer token',
        field: `${field} bearerToken.tokenSecretRef`,
        delivery: viaProvider(SECRET_NAMES.bearerToken),
      });
    }
    if (external.spec.type === 'tokenExchange' && tokenExchange?.clientSecretRef) {
      out.push({
        ref: tokenExchange.clientSecretRef,
        purpose: 'token exchange client secret',
        field: `${field} tokenExchange.clientSecretRef`,
        delivery: viaProvider(SECRET_NAMES.tokenExchangeClientSecret),
      });
    }
  }
  const oidc = inputs.oidcConfig;
  if (oidc?.spec.type === 'inline' && oidc.spec.inline?.clientSecretRef) {
    out.push({
      ref: oidc.spec.inline.clientSecretRef,
      purpose: 'OIDC client secret',
      field: `MCPOIDCConfig ${oidc.metadata.name ?? ''} inline.clientSecretRef`,
      delivery: viaProvider(SECRET_NAMES.oidcClientSecret),
    });
  }
  const storage = spec.sessionStorage;
  if (storage?.provider === 'redis') {
    if (storage.passwordRef) {
      out.push({
        ref: storage.passwordRef,
        purpose: 'Redis password',
        field: 'spec.sessionStorage.passwordRef',
        delivery: { env: REDIS_PASSWORD_ENV },
      });
    }
    if (storage.tls?.caCertSecretRef) {
      out.push({
        ref: storage.tls.caCertSecretRef,
        purpose: 'Redis CA certificate',
        field: 'spec.sessionStorage.tls.caCertSecretRef',
        delivery: { volume: 'redis-ca' },
      });
    }
  }
  return out;
}

/** `NAME,target=TARGET`: how the RunConfig refers to a secret the provider resolves. */
export function secretRef(name: string, target: string): string {
  return `${name},target=${target}`;
}
