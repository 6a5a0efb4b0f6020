/**
 * One workload as an MCP client sees it, fetched live through its proxy (so every policy of the
 * workload applies and the audit log records the dashboard's calls): tools, prompts, resources,
 * and a tool call. A fresh MCP SDK client per request: the dashboard keeps no session open.
 */
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { runtimeError } from '../util/errors.js';
import type { Capabilities, ToolCallResult } from './shared.js';

const CLIENT_INFO = { name: 'moat-ui', version: '1.0.0' };
/** A workload that does not answer within this is reported, not waited for. */
const REQUEST_TIMEOUT_MS = 30_000;

async function withClient<T>(url: string, use: (client: Client) => Promise<T>): Promise<T> {
  if (!url) throw runtimeError('the workload has no URL (is it running?)');
  const endpoint = new URL(url);
  const client = new Client(CLIENT_INFO);
  await client.connect(
    endpoint.pathname.endsWith('/sse')
      ? new SSEClientTransport(endpoint)
      : new StreamableHTTPClientTransport(endpoint),
  );
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

export function listCapabilities(url: string): Promise<Capabilities> {
  return withClient(url, async (client) => {
    const offered = client.getServerCapabilities() ?? {};
    const options = { timeout: REQUEST_TIMEOUT_MS };
    const [tools, prompts, resources] = await Promise.all([
      offered.tools ? client.listTools(undefined, options).then((r) => r.tools) : [],
      offered.prompts ? client.listPrompts(undefined, options).then((r) => r.prompts) : [],
      offered.resources ? client.listResources(undefined, options).then((r) => r.resources) : [],
    ]);
    return {
      tools: tools.map((t) => ({
        name: t.name,
        description: t.description ?? '',
        inputSchema: t.inputSchema,
      })),
      prompts: prompts.map((p) => ({ name: p.name, description: p.description ?? '' })),
      resources: resources.map((r) => ({ uri: r.uri, name: r.name, mimeType: r.mimeType ?? '' })),
    };
  });
}

export function callTool(url: string, name: string, args: Record<string, unknown>): Promise<ToolCallResult> {
  return withClient(url, async (client) => {
    const result = await client.callTool({ name, arguments: args }, { timeout: REQUEST_TIMEOUT_MS });
    return { isError: result.isError === true, content: result.content ?? [] };
  });
}
