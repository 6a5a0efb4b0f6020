/**
 * A front session's SSE events, kept so a client that lost a stream can resume it (`Last-Event-ID`):
 * with an event store the SDK's transport also opens every POST stream with a priming event (an id,
 * no data) and a `retry` field, which is what resumable 2025-11-25 servers send. The aggregator's
 * members are resumable behind it (their clients reconnect by themselves), so the front must be too,
 * or a client loses what a member sent while its stream was gone.
 */
import type { EventStore, JSONRPCMessage } from '@modelcontextprotocol/server';

/** Events kept per front session (the oldest are dropped first): a bound, not a history. */
export const KEPT_EVENTS = 1_000;
/** And at most this many bytes of them (as JSON), so large tool results cannot pile up per session. */
export const KEPT_BYTES = 4 * 1024 * 1024;

interface Stored {
  id: string;
  streamId: string;
  message: JSONRPCMessage;
  bytes: number;
}

/** The stream an event id of this store names (ids are `<streamId>::<counter>`). */
export function streamOf(eventId: string): string | undefined {
  const at = eventId.lastIndexOf('::');
  return at < 0 ? undefined : eventId.slice(0, at);
}

/** One session's store: event ids name their stream (streamOf). */
export function sessionEventStore(kept = KEPT_EVENTS, keptBytes = KEPT_BYTES): EventStore {
  const events: Stored[] = [];
  let counter = 0;
  let bytes = 0;
  return {
    storeEvent(streamId, message) {
      const id = `${streamId}::${String(++counter).padStart(12, '0')}`;
      const size = JSON.stringify(message).length;
      events.push({ id, streamId, message, bytes: size });
      bytes += size;
      while (events.length > kept || bytes > keptBytes) bytes -= events.shift()?.bytes ?? 0;
      return Promise.resolve(id);
    },
    getStreamIdForEventId(eventId) {
      return Promise.resolve(streamOf(eventId));
    },
    async replayEventsAfter(lastEventId, { send }) {
      const streamId = streamOf(lastEventId) ?? '';
      for (const event of events) {
        if (event.streamId === streamId && event.id > lastEventId) await send(event.id, event.message);
      }
      return streamId;
    },
  };
}
