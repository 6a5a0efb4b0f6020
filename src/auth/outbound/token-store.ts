/**
 * Where outbound OAuth state lives: client registrations per issuer (shared by every workload that
 * talks to that issuer, so a restart or a second workload never registers again) and tokens per
 * workload, both as system secrets. A read-only secrets provider keeps them in memory only, so the
 * workload works but a restart needs a new login (logged once).
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

function issuerKey(issuer: string): string {
  return createHash('sha256').update(issuer.replace(/\/+$/, '')).digest('hex').slice(0, 24);
}

export function registrationSecretName(issuer: string): string {
  return systemSecretName('oauth', `CLIENT_${issuerKey(issuer)}`);
}

export function tokensSecretName(workload: string): string {
  return systemSecretName('oauth', `TOKENS_${workload}`);
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

  async tokens(workload: string): Promise<StoredTokens | undefined> {
    return this.read<StoredTokens>(tokensSecretName(workload));
  }

  saveTokens(workload: string, tokens: StoredTokens): Promise<void> {
    return this.write(tokensSecretName(workload), tokens);
  }

  async forgetTokens(workload: string): Promise<void> {
    const name = tokensSecretName(workload);
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
