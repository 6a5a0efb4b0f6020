/**
 * `subscriptions/listen` at a 2026-07-28 stdio server. The server has one stdout for every
 * client, and stamps each change notification with the id of the listen it belongs to
 * (`_meta.subscriptionId`). The multiplexer sends every listen under an id of its own (a counter,
 * never a client's id), so a stamp names exactly one open listen: that client's stream gets the
 * notification with its own id restored; a stamp of no open listen (ended, or never opened) is
 * dropped, never guessed. Unstamped change notifications from a 2026 server reach no one.
 */
import type { JsonRpcId, JsonRpcNotification } from '../../../mcp/jsonrpc.js';
import { META } from '../../../mcp/revisions.js';
import type { ListenFilter } from '../../eras/down/listen.js';
import { isObject } from '../../../util/is-object.js';

/** The listen id a 2026 server stamped on a notification, if any. */
export function subscriptionIdOf(notification: JsonRpcNotification): JsonRpcId | undefined {
  const meta = notification.params?._meta;
  const id = isObject(meta) ? meta[META.subscriptionId] : undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/** The proxy's own listen for its 2025-era sessions: every list change, and the subscribed URIs. */
export function sessionEraListenFilter(uris: string[]): ListenFilter {
  return {
    toolsListChanged: true,
    promptsListChanged: true,
    resourcesListChanged: true,
    ...(uris.length > 0 ? { resourceSubscriptions: uris } : {}),
  };
}

/** Open listens by the upstream id the multiplexer gave them. */
export class ListenRoutes<Listen> {
  readonly #open = new Map<number, Listen>();

  open(upstreamId: number, listen: Listen): void {
    this.#open.set(upstreamId, listen);
  }

  close(upstreamId: number): void {
    this.#open.delete(upstreamId);
  }

  get(upstreamId: number): Listen | undefined {
    return this.#open.get(upstreamId);
  }

  all(): Listen[] {
    return [...this.#open.values()];
  }

  /** The notification stamped with the client's own listen id. */
  static restamped(notification: JsonRpcNotification, clientId: JsonRpcId): JsonRpcNotification {
    const params = notification.params ?? {};
    const meta = isObject(params._meta) ? params._meta : {};
    return { ...notification, params: { ...params, _meta: { ...meta, [META.subscriptionId]: clientId } } };
  }

  /** The notification as a 2025-era client gets it: no stamp. */
  static unstamped(notification: JsonRpcNotification): JsonRpcNotification {
    const params = notification.params ?? {};
    if (!isObject(params._meta)) return notification;
    const { [META.subscriptionId]: _stamp, ...meta } = params._meta;
    const rest = { ...params };
    if (Object.keys(meta).length > 0) rest._meta = meta;
    else delete rest._meta;
    return { ...notification, params: rest };
  }
}
