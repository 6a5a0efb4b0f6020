/**
 * Guardrails on the server's questions where the two sides speak different MCP eras, so the
 * question changes shape on the way. Forward: a real v2 client pinned to 2026-07-28 in front of
 * the asking fixture (a v1 server, 2025-11-25) over HTTP and stdio: the server's sampling
 * request becomes an input request of an InputRequiredResult, screened before it does. Reverse: a
 * real v1 client in front of 2026-only v2 servers (over HTTP: `confirm`; over stdio: the
 * 2026 conformance fixture's `test_elicitation`): each input request is screened before the
 * proxy asks the client with a server request.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitRequest } from '@modelcontextprotocol/sdk/types.js';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import type { RunConfigInput } from '../../../src/config/runconfig.js';
import type { BackendSpec } from '../../../src/proxy/types.js';
import { moatInFrontOf, type MoatUnderTest } from '../../fixtures/conformance/moat.js';
import { FIXTURE_2026_MAIN } from '../../fixtures/conformance/spawn.js';
import { AWS_KEY, GITHUB_TOKEN } from '../../fixtures/guardrails/asking-server.js';
import { startAskingBackend } from '../../fixtures/guardrails/asking-http.js';
import { startModernOnlyBackend } from '../../support/modern-backends.js';

const MODERN = '2026-07-28';
const STDIO_ASKING = new URL('../../fixtures/guardrails/asking-stdio.ts', import.meta.url).pathname;

const textOf = (result: unknown): string =>
  ((result as { content: Array<{ text: string }> }).content[0] as { text: string }).text;

/** Guardrails as the RunConfig's inline section; the client's arguments are not screened here. */
const guardrails = (toClient: 'redact' | 'block'): Partial<RunConfigInput> => ({
  guardrail_config: { to_server: 'off', to_client: toClient },
});

async function withMoat(
  backend: 'stdio-asking' | 'stdio-2026' | BackendSpec,
  config: Partial<RunConfigInput>,
  work: (endpoint: string) => Promise<void>,
): Promise<void> {
  const moat: MoatUnderTest =
    backend === 'stdio-asking'
      ? await moatInFrontOf('stdio', config, { fixtureMain: STDIO_ASKING })
      : backend === 'stdio-2026'
        ? await moatInFrontOf('stdio', config, {
            fixtureMain: FIXTURE_2026_MAIN,
            fixtureMode: 'stdio-modern-only',
          })
        : await moatInFrontOf(backend, config);
  try {
    await work(moat.proxy.endpoint);
  } finally {
    await moat.stop();
  }
}

/** A v2 client pinned to 2026-07-28 that answers sampling; what it was asked. */
async function modernClient(endpoint: string): Promise<{ client: ClientV2; asked: unknown[] }> {
  const asked: unknown[] = [];
  const client = new ClientV2(
    { name: 'guardrails-modern', version: '1' },
    { versionNegotiation: { mode: { pin: MODERN } }, capabilities: { sampling: {} } },
  );
  client.setRequestHandler('sampling/createMessage', (request) => {
    asked.push(request.params);
    return {
      role: 'assistant' as const,
      content: { type: 'text' as const, text: 'a summary' },
      model: 'test',
    };
  });
  await client.connect(new TransportV2(new URL(endpoint)));
  return { client, asked };
}

/** A v1 (2025-era) client that answers elicitation; what it was asked. */
async function legacyClient(endpoint: string): Promise<{ client: Client; asked: ElicitRequest['params'][] }> {
  const asked: ElicitRequest['params'][] = [];
  const client = new Client(
    { name: 'guardrails-legacy', version: '1' },
    { capabilities: { elicitation: {} } },
  );
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params);
    return { action: 'accept', content: { answer: 'yes', response: 'yes' } };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));
  return { client, asked };
}

describe('guardrails where a 2026-07-28 client meets a 2025-era server (input requests)', () => {
  for (const over of ['http', 'stdio'] as const) {
    const backend = async (): Promise<{ spec: BackendSpec | 'stdio-asking'; close: () => Promise<void> }> => {
      if (over === 'stdio') return { spec: 'stdio-asking', close: () => Promise.resolve() };
      const asking = await startAskingBackend(false);
      return {
        spec: { kind: 'http', url: asking.url, transport: 'streamable-http', remote: false },
        close: () => asking.close(),
      };
    };

    it(`over ${over}: the server's sampling request reaches the client redacted`, async () => {
      const { spec, close } = await backend();
      try {
        await withMoat(spec, guardrails('redact'), async (endpoint) => {
          const { client, asked } = await modernClient(endpoint);
          try {
            expect(textOf(await client.callTool({ name: 'sample', arguments: {} }))).toBe(
              'sampled: {"type":"text","text":"a summary"}',
            );
            expect(asked).toEqual([
              expect.objectContaining({
                messages: [
                  {
                    role: 'user',
                    content: { type: 'text', text: 'Summarise: token [REDACTED:github-token]' },
                  },
                ],
                systemPrompt: 'Deploy key [REDACTED:aws-access-key]',
              }),
            ]);
          } finally {
            await client.close();
          }
        });
      } finally {
        await close();
      }
    });

    it(`over ${over}: a blocked sampling request is answered to the server, never asked`, async () => {
      const { spec, close } = await backend();
      try {
        await withMoat(spec, guardrails('block'), async (endpoint) => {
          const { client, asked } = await modernClient(endpoint);
          try {
            const answer = textOf(await client.callTool({ name: 'sample', arguments: {} }));
            expect(answer).toMatch(/^refused: .*Blocked by the proxy's guardrails: the request contains /);
            expect(answer).not.toContain(GITHUB_TOKEN);
            expect(asked).toEqual([]);
          } finally {
            await client.close();
          }
        });
      } finally {
        await close();
      }
    });
  }
});

describe('guardrails where a 2025-era client meets a 2026-only server (input rounds)', () => {
  const question = `Rotate ${AWS_KEY} now?`;

  it('over http: the input request reaches the client redacted; blocked, the call fails without asking', async () => {
    const modern = await startModernOnlyBackend();
    const spec: BackendSpec = { kind: 'http', url: modern.url, transport: 'streamable-http', remote: false };
    try {
      await withMoat(spec, guardrails('redact'), async (endpoint) => {
        const { client, asked } = await legacyClient(endpoint);
        try {
          const result = await client.callTool({ name: 'confirm', arguments: { question } });
          expect(asked.map((params) => params.message)).toEqual(['Rotate [REDACTED:aws-access-key] now?']);
          expect(textOf(result)).not.toContain(AWS_KEY);
        } finally {
          await client.close();
        }
      });
      await withMoat(spec, guardrails('block'), async (endpoint) => {
        const { client, asked } = await legacyClient(endpoint);
        try {
          const refused = client.callTool({ name: 'confirm', arguments: { question } });
          await expect(refused).rejects.toThrow(/guardrails: the request contains aws-access-key/);
          expect(asked).toEqual([]);
        } finally {
          await client.close();
        }
      });
    } finally {
      await modern.close();
    }
  });

  it('over stdio: the input request reaches the client redacted', async () => {
    await withMoat('stdio-2026', guardrails('redact'), async (endpoint) => {
      const { client, asked } = await legacyClient(endpoint);
      try {
        const result = await client.callTool({ name: 'test_elicitation', arguments: { message: question } });
        expect(asked.map((params) => params.message)).toEqual(['Rotate [REDACTED:aws-access-key] now?']);
        expect(textOf(result)).toBe(
          'Elicitation completed: action=accept, content={"answer":"yes","response":"yes"}',
        );
      } finally {
        await client.close();
      }
    });
  });
});
