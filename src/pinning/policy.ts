/**
 * Tool definition pinning as a message policy. The first time a tools/list answer shows a tool,
 * its hash (name, description, input schema) is pinned (trust on first use). A later answer
 * with another definition for that name (a "rug pull": same tool, new instructions to the
 * model) is logged as a warning, recorded for audit and kept as a pending change. In `enforce`
 * mode the changed tool is hidden from tools/list and calls to it are refused until a user runs
 * `moat tools approve <workload> <tool>`; in `warn` mode it stays usable.
 */
import type { ExchangeRecord } from '../mcp/exchange.js';
import { RPC, type JsonRpcResponse } from '../mcp/jsonrpc.js';
import { ALLOW, type ClientVerdict, type MessagePolicy } from '../mcp/policy.js';
import { errorMessage } from '../util/errors.js';
import type { Logger } from 'pino';
import { log } from '../util/log.js';
import { toolHash } from './hash.js';
import type { PinStore, Pins } from './store.js';
import { isObject } from '../util/is-object.js';

export const TOOL_PINNING_POLICY = 'tool-pinning';
export type PinningMode = 'warn' | 'enforce';

/** A tool whose definition changed and is not approved (enforce: hidden). */
function unapproved(pins: Pins, name: string): boolean {
  return pins[name]?.changed !== undefined;
}

export function createPinningPolicy(options: {
  mode: PinningMode;
  store: PinStore;
  workload: string;
  logger?: Logger;
}): MessagePolicy {
  const { mode, store, workload } = options;
  const logger = options.logger ?? log();
  const enforce = mode === 'enforce';

  async function pinAll(tools: Array<Record<string, unknown>>, exchange?: ExchangeRecord): Promise<Pins> {
    const now = new Date().toISOString();
    const changedNow: string[] = [];
    let pins: Pins = {};
    await store.update((current) => {
      for (const tool of tools) {
        const name = tool.name as string;
        const hash = toolHash(tool);
        const pin = current[name];
        if (!pin) current[name] = { hash, pinnedAt: now };
        else if (pin.hash === hash) delete pin.changed;
        else if (pin.changed?.hash !== hash) {
          pin.changed = { hash, seenAt: now };
          changedNow.push(name);
        }
      }
      pins = current;
    });
    for (const tool of changedNow) {
      logger.warn(
        { workload, tool, mode },
        `the definition of tool ${JSON.stringify(tool)} changed since it was pinned; ${enforce ? 'it is hidden' : 'it stays usable'} until approved with \`moat tools approve ${workload} ${tool}\``,
      );
    }
    if (exchange && changedNow.length > 0) exchange.toolDefinitionsChanged = changedNow;
    return pins;
  }

  return {
    name: TOOL_PINNING_POLICY,

    async onClientMessage(message): Promise<ClientVerdict> {
      if (!enforce || !('method' in message) || message.method !== 'tools/call') return ALLOW;
      const name = message.params?.name;
      if (typeof name !== 'string') return ALLOW;
      let pins: Pins;
      try {
        pins = await store.load();
      } catch (err) {
        logger.error({ err: errorMessage(err) }, 'tool pins unavailable; refusing the call');
        return {
          action: 'deny',
          reason: 'policy-error',
          error: { code: RPC.internalError, message: 'Tool pins are unavailable' },
        };
      }
      if (!unapproved(pins, name)) return ALLOW;
      return {
        action: 'deny',
        reason: 'not-found',
        error: {
          code: RPC.invalidParams,
          message: `Unknown tool: ${name} (its definition changed and awaits approval: moat tools approve ${workload} ${name})`,
          data: { tool: name },
        },
      };
    },

    // Only tools/list answers carry definitions: every other answer passes unparsed.
    needsResponse: (method) => method === 'tools/list',

    async onServerResponse(response, request, ctx): Promise<JsonRpcResponse> {
      if (request.method !== 'tools/list' || !isObject(response.result)) return response;
      const listed = response.result.tools;
      if (!Array.isArray(listed)) return response;
      const tools = listed.filter(
        (t): t is Record<string, unknown> => isObject(t) && typeof t.name === 'string',
      );
      let pins: Pins;
      try {
        pins = await pinAll(tools, ctx.exchange);
      } catch (err) {
        logger.error({ err: errorMessage(err) }, 'could not record tool pins');
        if (!enforce) return response;
        return {
          jsonrpc: '2.0',
          id: response.id,
          error: {
            code: RPC.internalError,
            message: 'Tool pins are unavailable, so changed tools cannot be hidden',
          },
        };
      }
      if (!enforce) return response;
      const shown = tools.filter((t) => !unapproved(pins, t.name as string));
      return { ...response, result: { ...response.result, tools: shown } };
    },
  };
}
