/** Inbound authentication as an edge middleware: the caller's identity, or the refusal written. */
import type { InboundAuth } from '../../auth/inbound/authenticate.js';
import { writeJsonRpcError } from '../pipeline/errors.js';
import type { EdgeMiddleware, EdgeRequest } from '../types.js';
import { anonymousIdentity } from './identity.js';

const UNCHECKED = anonymousIdentity('credentials not checked yet');

export function authenticationMiddleware(auth: InboundAuth): EdgeMiddleware {
  const authenticate = async (request: EdgeRequest, next: () => Promise<void>): Promise<void> => {
    // Nobody is proven until the token is: a failure on the way is recorded as nobody's too.
    request.identity = UNCHECKED;
    const outcome = await auth.authenticate(request.req.headers.authorization, request.externalBaseUrl);
    if ('refusal' in outcome) {
      const { status, error, headers, presented } = outcome.refusal;
      request.identity = anonymousIdentity(presented);
      writeJsonRpcError(request.res, status, error, null, headers);
      return;
    }
    request.identity = outcome.identity;
    await next();
  };
  return (request, next) => {
    // A token validated before goes on in this turn: no promise hops before the request is read.
    const known = auth.rememberedIdentity(request.req.headers.authorization);
    if (!known) return authenticate(request, next);
    request.identity = known;
    return next();
  };
}
