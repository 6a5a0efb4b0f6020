/**
 * The operator's output for an MCPRemoteProxy with every policy kind, run as a real pod of the
 * Moat image (`podman kube play`; see test/support/pods.ts for what is changed to play it here):
 * an official MCP SDK client calls a tool of a real MCP server on the host through the pod, with
 * an OIDC token from a real OpenID provider, a Cedar policy, a tool filter and injected headers.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestOidcProvider, type TestOidcProvider } from '../../support/oidc.js';
import { applyObjects, remoteProxy, secret, waitForAppliedObjects } from '../../support/pods-cluster.js';
import { addCall, initializeSession, usePodTestEnvironment } from '../../support/pods-fixture.js';
import { waitForHealth, type PlayedProxy } from '../../support/pods.js';
import { INIT_BODY, messagesOf, post } from '../../support/proxy-harness.js';
import { testTempDir } from '../../support/temp-dir.js';

const AUDIENCE = 'https://policies.pods.test/mcp';
const env = usePodTestEnvironment('pods-policies', testTempDir('moat-pods-policies-'));
let idp: TestOidcProvider;
let played: PlayedProxy;

beforeAll(async () => {
  idp = await startTestOidcProvider([{ id: 'alice' }], { audience: AUDIENCE });
  env.onCleanup(() => idp.close());
  await applyObjects(env.namespace, [
    secret('remote-api-key', { token: 'key-from-a-secret' }),
    {
      apiVersion: 'moat.dev/v1beta1',
      kind: 'MCPOIDCConfig',
      metadata: { name: 'test-idp' },
      spec: {
        type: 'inline',
        inline: { issuer: idp.issuer, jwksAllowPrivateIP: true, insecureAllowHTTP: true },
      },
    },
    {
      apiVersion: 'moat.dev/v1beta1',
      kind: 'MCPToolConfig',
      metadata: { name: 'echo-and-add' },
      spec: { toolsFilter: ['echo', 'add'] },
    },
    remoteProxy(
      'policies',
      env.proxySpec({
        oidcConfigRef: { name: 'test-idp', audience: AUDIENCE },
        authzConfig: {
          type: 'inline',
          inline: {
            // `secret` is permitted, but the tool filter hides it; `add` passes the filter, Cedar denies it.
            policies: [
              'permit(principal, action == Action::"call_tool", resource == Tool::"echo");',
              'permit(principal, action == Action::"call_tool", resource == Tool::"secret");',
            ],
          },
        },
        toolConfigRef: { name: 'echo-and-add' },
        headerForward: {
          addPlaintextHeaders: { 'X-Client': 'moat-pod' },
          addHeadersFromSecret: [
            { headerName: 'X-Api-Key', valueSecretRef: { name: 'remote-api-key', key: 'token' } },
          ],
        },
      }),
    ),
  ]);
  await waitForAppliedObjects(env.namespace, 'policies');
  played = await env.play('policies');
  await waitForHealth(played.pods[0]!);
}, 240_000);

function sdkClient(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'pods-policies', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  return client.connect(transport).then(() => client);
}

describe('a proxy pod played from the operator output (Secrets resolved into the pod)', () => {
  it('calls a tool of the remote with a token from the OIDC provider and injects both headers', async () => {
    const pod = played.pods[0]!;
    const client = await sdkClient(pod.url, await idp.token('alice'));
    try {
      const result = await client.callTool({ name: 'echo', arguments: { text: 'through the pod' } });
      expect(result.content).toEqual([{ type: 'text', text: 'through the pod' }]);
    } finally {
      await client.close();
    }
    const upstream = env.backend.seen.filter((r) => r.method === 'POST');
    expect(upstream.length).toBeGreaterThan(0);
    for (const request of upstream) {
      expect(request.headers['x-client']).toBe('moat-pod');
      expect(request.headers['x-api-key']).toBe('key-from-a-secret');
      // The client's token is for the proxy only; it never reaches the remote.
      expect(request.headers.authorization).toBeUndefined();
    }
  });

  it('lists only the tools that pass both the tool filter and the Cedar policies', async () => {
    const client = await sdkClient(played.pods[0]!.url, await idp.token('alice'));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['echo']);
    } finally {
      await client.close();
    }
  });

  it('answers a Cedar denial with 403 and a JSON-RPC error', async () => {
    const url = `${played.pods[0]!.url}/mcp`;
    const session = await initializeSession(url, {
      authorization: `Bearer ${await idp.token('alice')}`,
    });
    const call = addCall(2, 1, 2);
    const denied = await post(url, call, session);
    expect(denied.status).toBe(403);
    expect(messagesOf(denied)[0]).toMatchObject({ id: 2, error: { code: 403 } });
  });

  it('refuses a request without a token and one with a token for another audience', async () => {
    const url = `${played.pods[0]!.url}/mcp`;
    expect((await post(url, INIT_BODY)).status).toBe(401);
    const other = await idp.token('alice', { resource: 'https://other.example/mcp' });
    expect((await post(url, INIT_BODY, { authorization: `Bearer ${other}` })).status).toBe(401);
  });
});
