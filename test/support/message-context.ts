import type { MessageContext } from '../../src/mcp/policy.js';
/** A message context for pipeline unit tests: the local user on a streamable-HTTP transport. */

export const localContext: MessageContext = {
  identity: { subject: 'u', groups: [], claims: {}, local: true },
  serverName: 's',
  transport: 'streamable-http',
  clientAddress: '127.0.0.1',
  headers: {},
};
