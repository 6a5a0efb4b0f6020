/**
 * Inbound security for one proxy, built from its RunConfig: audit and authentication as edge
 * middlewares (audit outermost, so refused requests are recorded), webhooks and Cedar
 * authorization as message policies (mutating → validating → authz, as in ToolHive), and the
 * RFC 9728 metadata route. Each part is present only when configured, and its code (Cedar, jose,
 * undici, zod schemas) is loaded only then: an unconfigured part costs no memory.
 */
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import { resolveInboundAuth } from '../auth/inbound/settings.js';
import { SECRET_REF } from '../config/defaults.js';
import type { RunConfig } from '../config/runconfig.js';
import { openSecretsProvider } from '../secrets/manager.js';
import { resolveSecretRef } from '../secrets/refs.js';
import { userSecrets } from '../secrets/scoped.js';
import type { SecretsProvider } from '../secrets/types.js';
import type { createWebhooks } from '../webhooks/index.js';
import { runtimeError } from '../util/errors.js';
import { log } from '../util/log.js';
import type { EdgeRoute } from './edge/server.js';
import type { EdgeMiddleware } from './types.js';
import type { ClientTransportKind, MessagePolicy } from '../mcp/policy.js';

export interface InboundSecurity {
  /** Outermost first: audit, then authentication. */
  middlewares: EdgeMiddleware[];
  /** After the RunConfig's own policies: mutating webhooks, validating webhooks, authorization. */
  policies: MessagePolicy[];
  routes: EdgeRoute[];
  close(): Promise<void>;
}

export interface InboundSecurityOptions {
  /** The MCP endpoint path clients use (`/mcp`, `/sse`, or a remote URL's path). */
  mcpPath: string;
  transport: ClientTransportKind;
  logger?: Logger;
  /** Secrets provider for secret references (opened on first use when absent). */
  secrets?: () => Promise<SecretsProvider>;
}

export async function createInboundSecurity(
  config: RunConfig,
  options: InboundSecurityOptions,
): Promise<InboundSecurity> {
  const logger = options.logger ?? log();
  let provider: Promise<SecretsProvider> | undefined;
  const secrets = () => (provider ??= (options.secrets ?? (() => openSecretsProvider()))());
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const c of closers.reverse()) await c();
  };

  try {
    const middlewares: EdgeMiddleware[] = [];
    const policies: MessagePolicy[] = [];
    const routes: EdgeRoute[] = [];

    const audit =
      config.audit_config !== undefined || config.audit_config_path !== undefined
        ? await (await import('../audit/config.js')).loadAuditSettings(config)
        : undefined;
    if (audit) {
      const { createAuditor } = await import('../audit/middleware.js');
      const auditor = await createAuditor(audit, { transport: options.transport });
      closers.push(() => auditor.close());
      middlewares.push(auditor.middleware);
    }

    const authz =
      config.authz_config !== undefined || config.authz_config_path !== undefined
        ? await (await import('../authz/index.js')).loadAuthz(config)
        : undefined;
    const auth = await resolveInboundAuth(config, {
      resolveSecret: async (ref) => resolveSecretRef(ref, await secrets(), '--oidc-client-secret'),
      groupClaimName: authz?.groupClaimName,
      roleClaimName: authz?.roleClaimName,
    });
    if (auth) {
      const { createInboundAuth } = await import('../auth/inbound/authenticate.js');
      const inbound = createInboundAuth(auth, { mcpPath: options.mcpPath });
      closers.push(() => inbound.close());
      middlewares.push(inbound.middleware);
      routes.push(inbound.route);
      if (!auth.audience) {
        logger.warn(
          'no --oidc-audience: tokens the issuer minted for any other service are accepted too; set the audience to this server',
        );
      }
      if (!auth.issuer)
        logger.warn('no --oidc-issuer: the protected-resource metadata names no authorization server');
    } else if (!isLoopbackHost(config.host)) {
      logger.warn(
        { host: config.host },
        `UNAUTHENTICATED proxy on non-loopback address ${config.host}: anyone who can reach the port acts as the local user; configure --oidc-issuer (see docs/security.md)`,
      );
    }

    const webhooks = await loadWebhooks(config, {
      resolveSecret: async (ref) => {
        const p = await secrets();
        if (SECRET_REF.test(ref)) return resolveSecretRef(ref, p, 'webhook hmac_secret_ref');
        const value = await userSecrets(p).get(ref);
        if (value === undefined)
          throw runtimeError(`webhook hmac_secret_ref: secret ${JSON.stringify(ref)} not found`);
        return value;
      },
    });
    if (webhooks) {
      closers.push(() => webhooks.close());
      policies.push(...webhooks.policies);
    }
    if (authz) policies.push(authz.policy);

    return { middlewares, policies, routes, close };
  } catch (err) {
    await close();
    throw err;
  }
}

async function loadWebhooks(config: RunConfig, options: Parameters<typeof createWebhooks>[1]) {
  if (!config.mutating_webhooks?.length && !config.validating_webhooks?.length) return undefined;
  const webhooks = await import('../webhooks/index.js');
  return webhooks.createWebhooks(config, options);
}

function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true;
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare) === 0) return false;
  return bare.startsWith('127.') || bare === '::1';
}
