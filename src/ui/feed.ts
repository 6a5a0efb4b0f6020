/**
 * The live workloads feed: the snapshot is recomputed when the state directory changes (any
 * `moat` process, the dashboard's own actions, a supervisor recording a restart) and on a slow
 * poll (a container or supervisor that died without writing anything), and sent to every
 * subscriber only when it differs from the last one sent.
 */
import { mkdirSync, watch, type FSWatcher } from 'node:fs';
import type { ContainerRuntime } from '../runtime/types.js';
import { errorMessage } from '../util/errors.js';
import type { WorkloadStore } from '../workloads/store.js';
import type { WorkloadsSnapshot } from './shared.js';
import { workloadsSnapshot } from './workloads.js';

/** File events come in bursts (temp file, rename, lock): one recompute per burst. */
const SETTLE_MS = 100;
/** Reconciles with the supervisors and containers even when no file changed. */
const POLL_MS = 5000;

type Listener = (snapshotJson: string) => void;

export class WorkloadFeed {
  private readonly listeners = new Set<Listener>();
  private readonly watchers: FSWatcher[] = [];
  private poll: NodeJS.Timeout | undefined;
  private settle: NodeJS.Timeout | undefined;
  private current = '';
  private computing: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly store: WorkloadStore,
    private readonly runtime: () => Promise<ContainerRuntime>,
  ) {}

  /** Watches the state directories; resolves once the first snapshot is known. */
  async start(): Promise<void> {
    for (const dir of [this.store.dirs.statuses, this.store.dirs.runconfigs]) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      this.watchers.push(watch(dir, () => this.changed()));
    }
    this.poll = setInterval(() => this.changed(), POLL_MS);
    await this.refresh();
  }

  /** Calls `listener` with the current snapshot now and with every different one after. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    if (this.current) listener(this.current);
    return () => this.listeners.delete(listener);
  }

  /** Recomputes soon (after a burst of file events settles). */
  changed(): void {
    clearTimeout(this.settle);
    this.settle = setTimeout(() => void this.refresh(), SETTLE_MS);
  }

  /** Recomputes now; a call while one runs makes it run once more afterwards. */
  async refresh(): Promise<void> {
    if (this.computing) {
      this.again = true;
      return this.computing;
    }
    this.computing = this.compute().finally(() => (this.computing = undefined));
    await this.computing;
    if (this.again) {
      this.again = false;
      await this.refresh();
    }
  }

  private async compute(): Promise<void> {
    let snapshot: WorkloadsSnapshot;
    try {
      snapshot = await workloadsSnapshot(this.store, this.runtime);
    } catch (err) {
      // The last rows stay on the page, with the reason they may be stale.
      const last = this.current ? (JSON.parse(this.current) as WorkloadsSnapshot).workloads : [];
      snapshot = { workloads: last, runtime_problem: `cannot read the workloads: ${errorMessage(err)}` };
    }
    const json = JSON.stringify(snapshot);
    if (json === this.current) return;
    this.current = json;
    for (const listener of this.listeners) listener(json);
  }

  close(): void {
    for (const watcher of this.watchers) watcher.close();
    clearInterval(this.poll);
    clearTimeout(this.settle);
    this.listeners.clear();
  }
}
