/**
 * The benchmark backends' one behaviour: answer a JSON-RPC text (undefined for notifications).
 * initialize mints a session id (so the proxy keeps real sessions); nothing else checks it.
 */
import { randomUUID } from 'node:crypto';

const INIT_RESULT = {
  protocolVersion: '2025-11-25',
  capabilities: { tools: {} },
  serverInfo: { name: 'moat-bench-echo', version: '1' },
};

export interface Answer {
  body: string;
  sessionId?: string;
}

export function answer(text: string): Answer | undefined {
  const message = JSON.parse(text) as {
    id?: string | number;
    method?: string;
    params?: { arguments?: unknown };
  };
  if (message.id === undefined || message.method === undefined) return undefined;
  let result: unknown;
  if (message.method === 'initialize') result = INIT_RESULT;
  else if (message.method === 'tools/call') {
    result = { content: [{ type: 'text', text: JSON.stringify(message.params?.arguments ?? {}) }] };
  } else if (message.method === 'tools/list') {
    result = {
      tools: [{ name: 'echo', description: 'Echoes its arguments', inputSchema: { type: 'object' } }],
    };
  } else result = {};
  const body = JSON.stringify({ jsonrpc: '2.0', id: message.id, result });
  return message.method === 'initialize' ? { body, sessionId: randomUUID() } : { body };
}
