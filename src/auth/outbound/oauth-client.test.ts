import { describe, expect, it } from 'vitest';
import { EnvironmentSecretsProvider } from '../../secrets/environment.js';
import { existingClient } from './oauth-client.js';
import type { RemoteOAuthSettings } from './oauth-settings.js';
import { OAuthStore } from './token-store.js';

const settings = (extra: Partial<RemoteOAuthSettings>): RemoteOAuthSettings => ({
  workload: 'w',
  remoteUrl: 'https://mcp.example/mcp',
  callbackPort: 0,
  skipBrowser: true,
  timeoutMs: 1000,
  extraParams: {},
  ...extra,
});
const CIMD = 'https://client.example/moat.json';
const cimdServer = { issuer: 'https://as.example', client_id_metadata_document_supported: true };
const plainServer = { issuer: 'https://as.example', registration_endpoint: 'https://as.example/reg' };

describe('existingClient: CIMD, then a configured client ID, then a stored registration', () => {
  const store = new OAuthStore(new EnvironmentSecretsProvider({}));

  it('uses the metadata document URL as a public client ID where the server supports it', async () => {
    const client = await existingClient(
      settings({ clientMetadataUrl: CIMD, clientId: 'pre', clientSecret: 's' }),
      cimdServer,
      store,
    );
    expect(client).toEqual({ clientId: CIMD, method: 'none', configured: true });
  });

  it('falls back to the configured client ID where the server does not', async () => {
    const client = await existingClient(
      settings({ clientMetadataUrl: CIMD, clientId: 'pre' }),
      plainServer,
      store,
    );
    expect(client).toMatchObject({ clientId: 'pre', method: 'none', configured: true });
  });

  it('falls back to a stored registration, else none (register)', async () => {
    expect(await existingClient(settings({ clientMetadataUrl: CIMD }), plainServer, store)).toBeUndefined();
    await store.saveRegistration({
      issuer: plainServer.issuer,
      client_id: 'registered',
      token_endpoint_auth_method: 'none',
      redirect_uris: ['http://127.0.0.1:8666/callback'],
    });
    expect(await existingClient(settings({ clientMetadataUrl: CIMD }), plainServer, store)).toMatchObject({
      clientId: 'registered',
    });
  });

  it('ignores the CIMD support flag when no URL was given', async () => {
    const fresh = new OAuthStore(new EnvironmentSecretsProvider({}));
    expect(await existingClient(settings({}), cimdServer, fresh)).toBeUndefined();
  });
});
