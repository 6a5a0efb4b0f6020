/** Inbound authentication as an edge middleware: the caller's identity, or the refusal written. */
import type { InboundAuth } from '../../auth/inbound/authenticate.js';
import { writeJsonRpcError } from '../pipeline/errors.js';
import type { EdgeMiddleware } from '../types.js';

export function authenticationMiddleware(auth: InboundAuth): EdgeMiddleware {
  return async (request, next) => {
    const outcome = await auth.authenticate(request.req.headers.authorization, request.externalBaseUrl);
    if ('refusal' in outcome) {
      const { status, error, headers } = outcome.refusal;
      writeJsonRpcError(request.res, status, error, null, headers);
      return;
    }
    request.identity = outcome.identity;
    await next();
  };
}
