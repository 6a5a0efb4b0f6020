/**
 * Kubernetes Events (core/v1) about the objects a controller reconciles. A repeat of the same
 * (object, type, reason, message) bumps `count` and `lastTimestamp` on the Event already written
 * instead of creating a new one, so a reconcile that fails every few seconds leaves one Event, not
 * hundreds. The memory of written Events is bounded; recording never throws into a reconcile.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { isStatus, type KubeClient } from './client.js';
import { EVENTS, collectionPath, objectPath, type KubeObject } from './resource.js';

export const REPORTING_CONTROLLER = 'moat.dev/operator';
const MAX_MESSAGE = 1024;

export type EventType = 'Normal' | 'Warning';

interface Written {
  namespace: string;
  name: string;
  count: number;
}

export interface EventRecorderOptions {
  client: KubeClient;
  log: Logger;
  /** Which replica wrote the Event (the leader-election identity). */
  instance: string;
  /** How many distinct Events are remembered for aggregation (oldest forgotten first). */
  maxRemembered?: number;
}

/** The API server's MicroTime: RFC 3339 with exactly six fractional digits. */
export function microTime(date = new Date()): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class EventRecorder {
  // A Map keeps insertion order: re-inserting on use makes it a small LRU.
  private readonly written = new Map<string, Written>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly maxRemembered: number;

  constructor(private readonly options: EventRecorderOptions) {
    this.maxRemembered = options.maxRemembered ?? 1000;
  }

  /** Records one occurrence; repeats of one Event are written one after another, never racing to create two. */
  record(
    involved: KubeObject,
    type: EventType,
    reason: string,
    message: string,
    action = 'Reconcile',
  ): Promise<void> {
    const meta = involved.metadata ?? {};
    const namespace = meta.namespace ?? 'default';
    const note = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 3)}...` : message;
    const id = [meta.uid ?? `${namespace}/${meta.name}`, type, reason, note].join('\u0000');
    const write = (this.inFlight.get(id) ?? Promise.resolve()).then(() =>
      this.write(id, involved, namespace, type, reason, note, action),
    );
    this.inFlight.set(id, write);
    return write.finally(() => {
      if (this.inFlight.get(id) === write) this.inFlight.delete(id);
    });
  }

  private async write(
    id: string,
    involved: KubeObject,
    namespace: string,
    type: EventType,
    reason: string,
    note: string,
    action: string,
  ): Promise<void> {
    const meta = involved.metadata ?? {};
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    try {
      const seen = this.written.get(id);
      if (seen) {
        this.written.delete(id);
        try {
          await this.options.client.mergePatch(objectPath(EVENTS, seen.namespace, seen.name), {
            count: seen.count + 1,
            lastTimestamp: now,
          });
          this.remember(id, { ...seen, count: seen.count + 1 });
          return;
        } catch (err) {
          // The API server expires Events (an hour by default): start a new one.
          if (!isStatus(err, 404)) throw err;
        }
      }
      const name = `${meta.name}.${randomBytes(8).toString('hex')}`;
      await this.options.client.create(collectionPath(EVENTS, namespace), {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace },
        involvedObject: {
          apiVersion: involved.apiVersion,
          kind: involved.kind,
          name: meta.name,
          namespace: meta.namespace,
          uid: meta.uid,
          resourceVersion: meta.resourceVersion,
        },
        type,
        reason,
        message: note,
        action,
        count: 1,
        firstTimestamp: now,
        lastTimestamp: now,
        source: { component: REPORTING_CONTROLLER },
        reportingComponent: REPORTING_CONTROLLER,
        reportingInstance: this.options.instance,
      });
      this.remember(id, { namespace, name, count: 1 });
    } catch (err) {
      this.options.log.warn(
        { reason, object: `${namespace}/${meta.name}`, err: String(err) },
        'could not record event',
      );
    }
  }

  private remember(id: string, written: Written): void {
    this.written.set(id, written);
    while (this.written.size > this.maxRemembered) this.written.delete(this.written.keys().next().value!);
  }
}
