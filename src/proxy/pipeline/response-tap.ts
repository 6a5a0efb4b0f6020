/**
 * Records the final answer to each client request in its exchange record, for observers that
 * want it (audit's application-error detection and response data). It is the first policy, so it
 * runs last on the way back and sees the answer exactly as the client gets it.
 */
import { recordResponse } from '../../mcp/exchange.js';
import type { MessagePolicy } from '../../mcp/policy.js';

export const responseTap: MessagePolicy = {
  name: 'response-tap',
  onServerResponse(response, _request, ctx) {
    if (ctx.exchange) recordResponse(ctx.exchange, response);
    return response;
  },
};
