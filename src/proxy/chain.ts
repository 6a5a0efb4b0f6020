/**
 * Everything a RunConfig asks the proxy to enforce, built in one place and in one order. Each
 * part is present only when configured, and its code (Cedar, jose, openid-client, webhooks' TLS
 * client, zod schemas) is loaded only then: an unconfigured part costs no memory.
 *
 * | stage            | part                                   | when                                  |
 * |------------------|----------------------------------------|---------------------------------------|
 * | edge middleware  | authentication (OIDC/JWT, RFC 6750)    | `oidc_config`                         |
 * | edge route       | RFC 9728 protected-resource metadata   | `oidc_config`                         |
 * | message policy 1 | response tap (answers for observers)   | an observer wants responses           |
 * | message policy 1a| cache scope (`public` → `private`)     | authorization or mutating webhooks    |
 * | message policy 1a| `Mcp-Param-*` header check (2026-07-28)| always                                |
 * | message policy 1a| tool search (find_tool, call_tool)     | `tool_search`                         |
 * | message policy 1b| rate limit (token buckets)             | `rate_limit`                          |
 * | message policy 2 | tool filter / override                 | `tools_filter`, `tools_override`      |
 * | message policy 3 | mutating webhooks                      | `mutating_webhooks`                   |
 * | message policy 4 | validating webhooks                    | `validating_webhooks`                 |
 * | message policy 5 | authorization (Cedar)                  | `authz_config`, `authz_config_path`   |
 * | message policy 5a| guardrails (secrets, personal data)    | `guardrail_config(_path)`             |
 * | message policy 6 | tool definition pinning                | `tool_pinning`                        |
 * | observer         | audit                                  | `audit_config`, `audit_config_path`   |
 * | observer         | telemetry (spans, metrics)             | `telemetry_config` with an endpoint   |
 * |                  |                                        | or the Prometheus path                |
 * | edge route       | `/metrics` on the transport port       | Prometheus path, metricsOnTransport   |
 * | upstream         | outbound credentials                   | a remote backend with remote auth     |
 *
 * Client messages pass the policies top to bottom, server answers bottom to top. Why this order:
 * the tool filter first, so a hidden tool looks the same to everyone (not found, whoever asks) and
 * every later policy sees the server's own tool names (Cedar policies and webhooks are written
 * against those, on calls and on list answers alike); mutating webhooks before validating ones and
 * before authorization, so what is validated and authorized is exactly what will be sent;
 * authorization last, as the final word on the message that leaves; guardrails after it, so they
 * screen exactly what leaves and, on the way back, redact an answer before any webhook, observer
 * or log sees it. Tool search above every policy that decides: a `call_tool` is turned into the
 * real tool's call before the rate limit, the filter, webhooks, Cedar and guardrails see it, and
 * find_tool ranks a tool list after they have filtered it (only the response tap, which records
 * what the client gets, and the protocol checks, which check what the client sent, sit above it).
 * Authentication runs before
 * every policy, so each sees who is calling; audit observes every exchange that passed the edge's
 * own checks, refused ones included.
 */
import type { Logger } from 'pino';
import type { UpstreamAuth } from '../auth/outbound/types.js';
import type { RemoteAuthStatus } from '../auth/outbound/remote-oauth.js';
import type { InboundAuth } from '../auth/inbound/authenticate.js';
import { resolveInboundAuth } from '../auth/inbound/settings.js';
import { SECRET_REF } from '../config/defaults.js';
import { clientPath, redisCommandTimeoutMs } from '../config/derived.js';
import type { RunConfig } from '../config/runconfig.js';
import type { ExchangeObserver } from '../mcp/exchange.js';
import type { MemberResolver } from '../mcp/members.js';
import type { MessagePolicy } from '../mcp/policy.js';
import { openSecretsProvider } from '../secrets/manager.js';
import { resolveSecretRef } from '../secrets/refs.js';
import { userSecrets } from '../secrets/scoped.js';
import type { SecretsProvider } from '../secrets/types.js';
import type { PinStore } from '../pinning/index.js';
import type { MetricsHandler, Telemetry } from '../telemetry/index.js';
import { telemetrySettings } from '../telemetry/settings.js';
import { runtimeError } from '../util/errors.js';
import { log } from '../util/log.js';
import { isLoopbackHost } from '../util/net.js';
import { moatDirs } from '../util/paths.js';
import { authenticationMiddleware } from './edge/authentication.js';
import type { EdgeRoute } from './edge/server.js';
import { writeJsonRpcError } from './pipeline/errors.js';
import { responseTap } from './pipeline/response-tap.js';
import { answersDifferPerPrincipal, createCacheScopePolicy } from './eras/revision/cache-scope.js';
import { createParamHeaderPolicy } from './eras/revision/param-header-policy.js';
import { createToolFilter } from './pipeline/tool-filter.js';
import type { EdgeMiddleware } from './types.js';

export interface Chain {
  /** Outermost first. */
  middlewares: EdgeMiddleware[];
  /** In client-message order. */
  policies: MessagePolicy[];
  observers: ExchangeObserver[];
  routes: EdgeRoute[];
  upstreamAuth?: UpstreamAuth;
  /** Present when telemetry is configured. */
  telemetry?: Telemetry;
  close(): Promise<void>;
}

export interface ChainOptions {
  logger?: Logger;
  /** Secrets provider for secret references (opened on first use when absent). */
  secrets?: () => Promise<SecretsProvider>;
  /** The backend is a remote server (outbound credentials apply). */
  remote: boolean;
  /** May an OAuth login to the remote start now (a terminal in the foreground)? */
  interactiveAuth?: boolean;
  /** Outbound OAuth state changes (e.g. the remote needs a new login). */
  onAuthStatus?: (status: RemoteAuthStatus) => void;
  /** An aggregate backend's member resolver: authorization gives Cedar `context.backend`. */
  memberOf?: MemberResolver;
}

export async function buildChain(config: RunConfig, options: ChainOptions): Promise<Chain> {
  const logger = options.logger ?? log();
  let provider: Promise<SecretsProvider> | undefined;
  const secrets = () => (provider ??= (options.secrets ?? (() => openSecretsProvider()))());
  const closers: Array<() => Promise<void>> = [];
  const chain: Chain = {
    middlewares: [],
    policies: [],
    observers: [],
    routes: [],
    close: async () => {
      for (const close of closers.reverse()) await close();
    },
  };

  try {
    if (config.audit_config !== undefined || config.audit_config_path !== undefined) {
      const settings = await (await import('../audit/config.js')).loadAuditSettings(config);
      if (settings) {
        const auditor = await (await import('../audit/observer.js')).createAuditor(settings);
        closers.push(() => auditor.close());
        chain.observers.push(auditor);
      }
    }
    const telemetry = await loadTelemetry(config, logger);
    if (telemetry) {
      closers.push(() => telemetry.close());
      chain.observers.push(telemetry.observer);
      chain.telemetry = telemetry;
    }
    const tap = responseTap(chain.observers);
    if (tap) chain.policies.push(tap);
    // Outside the tool filter, so both see tools under the names the client uses.
    if (answersDifferPerPrincipal(config)) chain.policies.push(createCacheScopePolicy());
    chain.policies.push(createParamHeaderPolicy());
    if (config.tool_search)
      chain.policies.push((await import('../toolsearch/index.js')).createToolSearchPolicy());

    const rateLimit = await loadRateLimit(config, logger);
    if (rateLimit) {
      closers.push(() => rateLimit.close());
      chain.policies.push(rateLimit.policy);
    }

    const toolFilter = createToolFilter(config.tools_filter, config.tools_override);
    if (toolFilter) chain.policies.push(toolFilter);

    const webhooks = await loadWebhooks(config, secrets);
    if (webhooks) {
      closers.push(() => webhooks.close());
      chain.policies.push(...webhooks.policies);
    }

    const authz =
      config.authz_config !== undefined || config.authz_config_path !== undefined
        ? await (await import('../authz/index.js')).loadAuthz(config, options.memberOf)
        : undefined;
    if (authz) chain.policies.push(authz.policy);

    if (config.guardrail_config !== undefined || config.guardrail_config_path !== undefined) {
      const guardrails = await (await import('../guardrails/index.js')).loadGuardrails(config, logger);
      if (guardrails) chain.policies.push(guardrails);
    }

    // Last for client messages, so first to see tools/list answers: it hashes the server's own
    // definitions, before overrides rename or re-describe them.
    const pinning = await loadPinning(config, logger);
    if (pinning) {
      closers.push(pinning.close);
      chain.policies.push(pinning.policy);
    }

    const auth = await resolveInboundAuth(config, {
      resolveSecret: async (ref) => resolveSecretRef(ref, await secrets(), '--oidc-client-secret'),
      groupClaimName: authz?.groupClaimName,
      roleClaimName: authz?.roleClaimName,
    });
    if (auth) {
      const { createInboundAuth } = await import('../auth/inbound/authenticate.js');
      const inbound = createInboundAuth(auth, { mcpPath: clientPath(config) });
      closers.push(() => inbound.close());
      chain.middlewares.push(authenticationMiddleware(inbound));
      chain.routes.push(inbound.route);
      if (telemetry?.transportMetrics)
        chain.routes.push(authenticatedMetrics(inbound, telemetry.transportMetrics));
      if (!auth.audience) {
        logger.warn(
          'no --oidc-audience: tokens the issuer minted for any other service are accepted too; set the audience to this server',
        );
      }
      if (!auth.issuer)
        logger.warn('no --oidc-issuer: the protected-resource metadata names no authorization server');
    } else {
      const serve = telemetry?.transportMetrics;
      if (serve) chain.routes.push({ prefix: METRICS_PATH, handle: (req, res) => serve(req, res) });
      if (!isLoopbackHost(config.host)) {
        logger.warn(
          { host: config.host },
          `UNAUTHENTICATED proxy on non-loopback address ${config.host}: anyone who can reach the port acts as the local user; configure --oidc-issuer (see docs/security.md)`,
        );
      }
    }

    // Outbound auth (openid-client) is loaded only for a remote server: local ones never use it.
    if (options.remote) {
      const { workloadUpstreamAuth } = await import('../auth/outbound/workload.js');
      chain.upstreamAuth = await workloadUpstreamAuth(config, {
        interactive: options.interactiveAuth ?? false,
        onStatus: options.onAuthStatus,
        secrets: await secrets(),
      });
    }
    return chain;
  } catch (err) {
    await chain.close();
    throw err;
  }
}

const METRICS_PATH = '/metrics';

/**
 * `/metrics` on the MCP port asks for the same token as MCP: with OIDC on, that port serves
 * nothing to an unauthenticated caller but discovery metadata, and metrics name tools and count
 * sessions. Scrapers without tokens use the dedicated diagnostics port.
 */
function authenticatedMetrics(inbound: InboundAuth, serve: MetricsHandler): EdgeRoute {
  return {
    prefix: METRICS_PATH,
    handle: async (req, res, base) => {
      const outcome = await inbound.authenticate(req.headers.authorization, base);
      if ('refusal' in outcome) {
        const { status, error, headers } = outcome.refusal;
        writeJsonRpcError(res, status, error, null, headers);
        return;
      }
      serve(req, res);
    },
  };
}

/**
 * Rate limits, with buckets in the session store's Redis when there is one (shared by replicas:
 * a limit is per workload, not per pod), else in this process's memory.
 */
async function loadRateLimit(config: RunConfig, logger: Logger) {
  if (!config.rate_limit) return undefined;
  const { createRateLimit } = await import('../ratelimit/index.js');
  const redisConfig = config.scaling_config?.session_redis;
  if (!redisConfig) return createRateLimit(config);
  const { connectRedis } = await import('./sessions/redis.js');
  const client = await connectRedis(redisConfig, { logger });
  const limit = createRateLimit(config, {
    eval: (script, keys, args) => client.eval(script, { keys, arguments: args }),
    prefix: `${redisConfig.key_prefix ?? 'moat:'}ratelimit:${config.name}:`,
    timeoutMs: redisCommandTimeoutMs(redisConfig),
    close: async () => {
      if (client.isOpen) await client.close();
    },
  });
  if (!limit) await client.close();
  return limit;
}

/** Tool pinning, with pins in the session store's Redis, the state dir, or memory. */
async function loadPinning(config: RunConfig, logger: Logger) {
  if (!config.tool_pinning) return undefined;
  const pinning = await import('../pinning/index.js');
  const { mode, store: where } = config.tool_pinning;
  const redisConfig = config.scaling_config?.session_redis;
  let store: PinStore;
  let close = () => Promise.resolve();
  if (redisConfig) {
    const { connectRedis } = await import('./sessions/redis.js');
    const client = await connectRedis(redisConfig, { logger });
    store = new pinning.RedisPinStore(
      client,
      `${redisConfig.key_prefix ?? 'moat:'}pins:${config.name}`,
      redisCommandTimeoutMs(redisConfig),
    );
    close = async () => {
      if (client.isOpen) await client.close();
    };
  } else if (where === 'memory') {
    store = new pinning.MemoryPinStore();
  } else {
    store = new pinning.FilePinStore(pinning.pinFile(moatDirs().state, config.name));
  }
  return { policy: pinning.createPinningPolicy({ mode, store, workload: config.name, logger }), close };
}

/** Telemetry, with the OpenTelemetry SDK loaded only when the RunConfig asks for it. */
async function loadTelemetry(config: RunConfig, logger: Logger): Promise<Telemetry | undefined> {
  const settings = telemetrySettings(config);
  if (!settings) return undefined;
  const { createTelemetry } = await import('../telemetry/index.js');
  const telemetry = await createTelemetry(settings, { logger });
  if (settings.prometheus && !settings.prometheus.onTransportPort) {
    logger.info('Prometheus /metrics is served on the diagnostics port only');
  } else if (settings.prometheus) {
    logger.warn(
      '/metrics on the transport port is deprecated and will be off by default: scrape the diagnostics port and set --otel-metrics-on-transport-port=false',
    );
  }
  return telemetry;
}

async function loadWebhooks(config: RunConfig, secrets: () => Promise<SecretsProvider>) {
  if (!config.mutating_webhooks?.length && !config.validating_webhooks?.length) return undefined;
  const webhooks = await import('../webhooks/index.js');
  return webhooks.createWebhooks(config, {
    resolveSecret: async (ref) => {
      const p = await secrets();
      if (SECRET_REF.test(ref)) return resolveSecretRef(ref, p, 'webhook hmac_secret_ref');
      const value = await userSecrets(p).get(ref);
      if (value === undefined)
        throw runtimeError(`webhook hmac_secret_ref: secret ${JSON.stringify(ref)} not found`);
      return value;
    },
  });
}
