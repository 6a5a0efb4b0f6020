/**
 * The inbound security the bench's secured proxies share (bench/security.ts, bench/soak.ts): OIDC
 * JWT validation against a real oidc-provider on loopback, Cedar authorization, audit to a file.
 */
import type { RunConfigInput } from '../src/config/runconfig.js';
import type { TestOidcProvider } from '../test/support/oidc.js';

/** Permits every tool call of the `eng` group (the test users the bench's IdP issues tokens for). */
export const ENG_MAY_CALL_TOOLS =
  'permit(principal in MoatGroup::"eng", action == Action::"call_tool", resource);';

/**
 * RunConfig fields for OIDC (tokens of `idp`), Cedar (`policies`) and audit records appended to
 * `auditFile`.
 */
export function securedConfig(
  idp: TestOidcProvider,
  auditFile: string,
  policies: string[] = [ENG_MAY_CALL_TOOLS],
): Partial<RunConfigInput> {
  return {
    oidc_config: {
      Issuer: idp.issuer,
      Audience: idp.jwtResource,
      // The IdP runs on loopback over plain HTTP in the bench.
      InsecureAllowHTTP: true,
      AllowPrivateIP: true,
    },
    authz_config: { version: '1.0', type: 'cedarv1', cedar: { policies } },
    audit_config: { component: 'bench', logFile: auditFile },
  };
}
