/**
 * `subscriptions/listen` (2026-07-28) in front of a 2025 server: the requested filter narrowed to
 * what the server can deliver, the acknowledgement that opens the stream, and the
 * `subscriptionId` stamp every notification on it carries. The transports map the filter onto
 * `resources/subscribe` and the server's list_changed / resources/updated notifications.
 */
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../../../mcp/jsonrpc.js';
import { RPC } from '../../../mcp/jsonrpc.js';
import { META } from '../../../mcp/revisions.js';
import { isObject } from '../../../util/is-object.js';

export interface ListenFilter {
  toolsListChanged?: true;
  promptsListChanged?: true;
  resourcesListChanged?: true;
  resourceSubscriptions?: string[];
}

/**
 * The honored part of the request's `params.notifications` given the server's capabilities, or
 * an error answer when the filter is missing or malformed.
 */
export function honoredFilter(
  request: JsonRpcRequest,
  capabilities: unknown,
): ListenFilter | JsonRpcResponse {
  const wanted = request.params?.notifications;
  const uris = isObject(wanted) ? wanted.resourceSubscriptions : undefined;
  if (
    !isObject(wanted) ||
    (uris !== undefined && (!Array.isArray(uris) || !uris.every((u) => typeof u === 'string')))
  ) {
    return {
      jsonrpc: '2.0',
      id: request.id,
      error: {
        code: RPC.invalidParams,
        message: "Invalid params: 'notifications' is required and must be a subscription filter",
      },
    };
  }
  const caps = isObject(capabilities) ? capabilities : {};
  const has = (area: string, bit: string) => isObject(caps[area]) && caps[area][bit] === true;
  const honored: ListenFilter = {};
  if (wanted.toolsListChanged === true && has('tools', 'listChanged')) honored.toolsListChanged = true;
  if (wanted.promptsListChanged === true && has('prompts', 'listChanged')) honored.promptsListChanged = true;
  if (wanted.resourcesListChanged === true && has('resources', 'listChanged')) {
    honored.resourcesListChanged = true;
  }
  if (Array.isArray(uris) && uris.length > 0 && has('resources', 'subscribe')) {
    honored.resourceSubscriptions = [...uris];
  }
  return honored;
}

/** Whether a server notification belongs on a stream with this filter. */
export function filterAccepts(filter: ListenFilter, notification: JsonRpcNotification): boolean {
  switch (notification.method) {
    case 'notifications/tools/list_changed':
      return filter.toolsListChanged === true;
    case 'notifications/prompts/list_changed':
      return filter.promptsListChanged === true;
    case 'notifications/resources/list_changed':
      return filter.resourcesListChanged === true;
    case 'notifications/resources/updated': {
      const uri = notification.params?.uri;
      return typeof uri === 'string' && filter.resourceSubscriptions?.includes(uri) === true;
    }
    default:
      return false;
  }
}

/** The notification with the listen request's id as its `subscriptionId`. */
export function stamped(notification: JsonRpcNotification, request: JsonRpcRequest): JsonRpcNotification {
  const params = notification.params ?? {};
  const meta = isObject(params._meta) ? params._meta : {};
  return { ...notification, params: { ...params, _meta: { ...meta, [META.subscriptionId]: request.id } } };
}

/** The first message of a listen stream: what Moat will deliver. */
export function acknowledgement(filter: ListenFilter, request: JsonRpcRequest): JsonRpcNotification {
  return stamped(
    { jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: filter } },
    request,
  );
}

/** The result that closes a listen stream gracefully (nothing to deliver, or the proxy stopping). */
export function listenClosed(request: JsonRpcRequest, serverInfo: unknown): JsonRpcResponse {
  return {
    jsonrpc: '2.0',
    id: request.id,
    result: {
      resultType: 'complete',
      _meta: {
        [META.subscriptionId]: request.id,
        ...(serverInfo === undefined ? {} : { [META.serverInfo]: serverInfo }),
      },
    },
  };
}

/** Whether the filter asks for anything at all. */
export function isEmptyFilter(filter: ListenFilter): boolean {
  return Object.keys(filter).length === 0;
}
