/**
 * Records the final answer to each client request in its exchange record, for observers that
 * want it (audit's application-error detection and response data, telemetry's error outcome). It
 * is the first policy, so it runs last on the way back and sees the answer exactly as the client
 * gets it. It asks only for the answers some observer needs, so the others pass unparsed.
 */
import { recordResponse, type ExchangeObserver, type ResponseNeed } from '../../mcp/exchange.js';
import type { MessagePolicy } from '../../mcp/policy.js';

/** The tap for these observers; undefined when none needs answers. */
export function responseTap(observers: readonly ExchangeObserver[]): MessagePolicy | undefined {
  const needs = observers.flatMap((o) => (o.needsResponse ? [o.needsResponse] : []));
  if (needs.length === 0) return undefined;
  // A loop, not some() with an arrow: no closure per answer screened.
  const needsResponse: ResponseNeed =
    needs.length === 1
      ? needs[0]!
      : (method, text) => {
          for (const need of needs) if (need(method, text)) return true;
          return false;
        };
  return {
    name: 'response-tap',
    needsResponse,
    onServerResponse(response, _request, ctx) {
      if (ctx.exchange) recordResponse(ctx.exchange, response);
      return response;
    },
  };
}
