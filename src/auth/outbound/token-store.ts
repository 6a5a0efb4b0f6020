/**
 * Where outbound OAuth state lives: client registrations per issuer (shared by every workload that
 * talks to that issuer, so a restart or a second workload never registers again) and tokens per
 * workload, issuer and resource, both as system secrets. Keying tokens by issuer means a second
 * authorization server (a remote that switched, or a mix-up) never receives nor overwrites the
 * tokens of the first. A read-only secrets provider keeps them in memory only, so the workload
 * works but a restart needs a new login (logged once).
 */
import { createHash } from 'node:crypto';
import { systemSecretName } from '../../secrets/scoped.js';
import type { SecretsProvider } from '../../secrets/types.js';
import { log } from '../../util/log.js';

export interface ClientRegistration {
  issuer: string;
  client_id: string;
  client_secret?: string;
  token_endpoint_auth_method: string;
  redirect_uris: string[];
  /** Seconds since the epoch; 0 or absent means it does not expire. */
  client_secret_expires_at?: number;
  registration_access_token?: string;
  registration_client_uri?: string;
  /**
   * Made because this issuer refused our client ID metadata document although it advertises
   * support: the next logins there use this registration, not the document.
   */
  cimdRefused?: boolean;
}

export interface StoredTokens {
  issuer: string;
  client_id: string;
  resource?: string;
  access_token: string;
  refresh_token?: string;
  /** Milliseconds since the epoch. */
  expires_at?: number;
  scope?: string;
}

/** Which tokens: those one authorization server issued for one resource. */
export interface TokenKey {
  issuer: string;
  resource?: string;
}

function hashKey(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 24);
}

function issuerKey(issuer: string): string {
  return hashKey(issuer.replace(/\/+$/, ''));
}

export function registrationSecretName(issuer: string): string {
  return systemSecretName('oauth', `CLIENT_${issuerKey(issuer)}`);
}

/** The issuer is hashed exactly as given: RFC 9207 compares issuers as plain strings. */
export function tokensSecretName(workload: string, key: TokenKey): string {
  return systemSecretName('oauth', `TOKENS_${workload}.${hashKey(`${key.issuer}\n${key.resource ?? ''}`)}`);
}

/** Before tokens were keyed by issuer, one entry per workload; read once and moved (see tokens()). */
export function legacyTokensSecretName(workload: string): string {
  return systemSecretName('oauth', `TOKENS_${workload}`);
}

/** Every token entry of a workload, legacy or keyed (a workload name may itself contain '.'). */
function isWorkloadTokens(name: string, workload: string): boolean {
  const prefix = systemSecretName('oauth', `TOKENS_${workload}`);
  return (
    name === prefix || (name.startsWith(`${prefix}.`) && /^[0-9a-f]{24}$/.test(name.slice(prefix.length + 1)))
  );
}

/** Deletes every token entry of a workload (registrations stay: they belong to their issuer). */
export async function forgetWorkloadTokens(secrets: SecretsProvider, workload: string): Promise<void> {
  if (!secrets.writable) return;
  for (const name of await secrets.list()) {
    if (isWorkloadTokens(name, workload)) await secrets.delete(name);
  }
}

export class OAuthStore {
  private readonly memory = new Map<string, string>();
  private warned = false;

  constructor(private readonly secrets: SecretsProvider) {}

  async registration(issuer: string): Promise<ClientRegistration | undefined> {
    return this.read<ClientRegistration>(registrationSecretName(issuer));
  }

  saveRegistration(registration: ClientRegistration): Promise<void> {
    return this.write(registrationSecretName(registration.issuer), registration);
  }

  /**
   * The workload's tokens from this issuer for this resource. An entry stored before tokens were
   * keyed by issuer is moved to its key when it matches, and otherwise left alone (never sent).
   */
  async tokens(workload: string, key: TokenKey): Promise<StoredTokens | undefined> {
    const found = await this.read<StoredTokens>(tokensSecretName(workload, key));
    if (found) return found;
    const legacy = await this.read<StoredTokens>(legacyTokensSecretName(workload));
    if (!legacy || legacy.issuer !== key.issuer || legacy.resource !== key.resource) return undefined;
    await this.saveTokens(workload, legacy);
    await this.remove(legacyTokensSecretName(workload));
    return legacy;
  }

  saveTokens(workload: string, tokens: StoredTokens): Promise<void> {
    return this.write(tokensSecretName(workload, tokens), tokens);
  }

  forgetTokens(workload: string, key: TokenKey): Promise<void> {
    return this.remove(tokensSecretName(workload, key));
  }

  private async remove(name: string): Promise<void> {
    this.memory.delete(name);
    if (this.secrets.writable) await this.secrets.delete(name);
  }

  private async read<T>(name: string): Promise<T | undefined> {
    const text = this.memory.get(name) ?? (await this.secrets.get(name));
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text) as T;
    } catch {
      return undefined;
    }
  }

  private async write(name: string, value: object): Promise<void> {
    const text = JSON.stringify(value);
    if (!this.secrets.writable) {
      if (!this.warned) {
        log().warn(
          { provider: this.secrets.kind },
          'the secrets provider is read-only: OAuth tokens are kept in memory and a restart needs a new login',
        );
        this.warned = true;
      }
      this.memory.set(name, text);
      return;
    }
    await this.secrets.set(name, text);
  }
}
