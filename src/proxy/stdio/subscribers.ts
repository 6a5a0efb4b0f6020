/** Which sessions subscribed to each resource URI (the server sees one subscription per URI). */
import { type MuxSession } from './session.js';

export class Subscribers {
  readonly #byUri = new Map<string, Set<MuxSession>>();

  /** How many URIs have subscribers. */
  get size(): number {
    return this.#byUri.size;
  }

  uris(): string[] {
    return [...this.#byUri.keys()];
  }

  of(uri: string): ReadonlySet<MuxSession> {
    return this.#byUri.get(uri) ?? new Set();
  }

  add(session: MuxSession, uri: string): void {
    session.subscriptions.add(uri);
    let set = this.#byUri.get(uri);
    if (!set) this.#byUri.set(uri, (set = new Set()));
    set.add(session);
  }

  /** True when the session was the URI's last subscriber. */
  remove(session: MuxSession, uri: string): boolean {
    session.subscriptions.delete(uri);
    const set = this.#byUri.get(uri);
    set?.delete(session);
    if (set?.size !== 0) return false;
    this.#byUri.delete(uri);
    return true;
  }
}
