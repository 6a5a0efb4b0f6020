/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go does it: take the Lease when it is
 * free or its holder stopped renewing it for a lease duration (measured on our own clock from when we
 * last saw it change, so clock skew between nodes does not matter), renew it every retry period,
 * give leadership up when renewals fail for the renew deadline, and on shutdown clear the holder so
 * another instance takes over at once instead of waiting for the lease to expire.
 */
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, isStatus } from './client.js';
import { microTime } from './events.js';
import { LEASES, collectionPath, objectPath, type KubeObject } from './resource.js';

export interface LeaderElectionOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  /** The Lease's name, one per controller. */
  name: string;
  identity?: string;
  /** How long a non-renewed lease stays valid for the others. Whole seconds, at least 1. */
  leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before it gives leadership up. */
  renewDeadlineMs?: number;
  /** The pause between attempts to acquire or renew. */
  retryPeriodMs?: number;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
  log: Logger;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

/** The pod name when the Deployment passes it in (downward API), else host name and process id. */
export function defaultIdentity(env: NodeJS.ProcessEnv = process.env): string {
  return env.POD_NAME || `${hostname()}_${process.pid}`;
}

export class LeaderElector {
  readonly identity: string;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private leading = false;
  private stopped = false;
  private lastRenew = 0;
  /** What we last saw in the Lease, and when (our clock). */
  private observed: { record: string; at: number } | undefined;
  private loop: Promise<void> | undefined;
  private readonly client: KubeClient;
  private wake: (() => void) | undefined;

  constructor(private readonly options: LeaderElectionOptions) {
    this.identity = options.identity ?? defaultIdentity();
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    if (this.leaseDurationMs < 1000 || this.leaseDurationMs % 1000 !== 0) {
      throw new Error(`leaseDurationMs must be whole seconds of at least 1000, got ${this.leaseDurationMs}`);
    }
    if (!(
      this.leaseDurationMs > this.renewDeadlineMs &&
      this.renewDeadlineMs > this.retryPeriodMs &&
      this.retryPeriodMs > 0
    )) {
      throw new Error('leader election needs leaseDurationMs > renewDeadlineMs > retryPeriodMs > 0');
    }
    // A hung request must not keep us "leading" past the deadline: bound each one well inside it.
    this.client = new KubeClient(options.kubeConfig, Math.max(500, this.renewDeadlineMs / 2));
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops electing; a leader clears the Lease's holder so a standby takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    if (this.leading) this.setLeading(false);
    // Even when not yet told we lead, the last round may have taken the Lease: release() checks.
    await this.release();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const ok = await this.tryAcquireOrRenew().catch((err: unknown) => {
        this.options.log.warn({ lease: this.options.name, err: String(err) }, 'lease request failed');
        return false;
      });
      if (this.stopped) break;
      if (ok) {
        this.lastRenew = Date.now();
        if (!this.leading) this.setLeading(true);
      } else if (this.leading && Date.now() - this.lastRenew > this.renewDeadlineMs) {
        this.options.log.error(
          { lease: this.options.name },
          'could not renew the lease within the renew deadline',
        );
        this.setLeading(false);
      }
      await this.sleep(this.retryPeriodMs);
    }
  }

  private setLeading(leading: boolean): void {
    this.leading = leading;
    this.options.log.info(
      { lease: this.options.name, identity: this.identity },
      leading ? 'became leader' : 'stopped leading',
    );
    if (leading) this.options.onStartedLeading();
    else this.options.onStoppedLeading();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** One round: true when we hold the lease afterwards. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name } = this.options;
    const client = this.client;
    const path = objectPath(LEASES, namespace, name);
    const now = microTime();
    const mine: LeaseSpec = {
      holderIdentity: this.identity,
      leaseDurationSeconds: this.leaseDurationMs / 1000,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: 0,
    };
    let lease: Lease;
    try {
      lease = await client.get<Lease>(path);
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
      await client.create(collectionPath(LEASES, namespace), {
        apiVersion: LEASES.apiVersion,
        kind: LEASES.kind,
        metadata: { name, namespace },
        spec: mine,
      });
      return true;
    }
    const spec = lease.spec ?? {};
    const record = JSON.stringify([spec.holderIdentity, spec.renewTime, spec.leaseDurationSeconds]);
    if (this.observed?.record !== record) this.observed = { record, at: Date.now() };
    const holder = spec.holderIdentity ?? '';
    const heldByMe = holder === this.identity;
    const validFor = (spec.leaseDurationSeconds ?? 0) * 1000;
    if (holder && !heldByMe && Date.now() < this.observed.at + validFor) return false;
    const next: LeaseSpec = heldByMe
      ? { ...spec, renewTime: now, leaseDurationSeconds: mine.leaseDurationSeconds }
      : { ...mine, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 };
    try {
      // PUT with the resourceVersion we read: if another instance wrote first, 409 and we lose the round.
      await client.replace(path, { ...lease, spec: next });
      return true;
    } catch (err) {
      if (isStatus(err, 409)) return false;
      throw err;
    }
  }

  private async release(): Promise<void> {
    const path = objectPath(LEASES, this.options.namespace, this.options.name);
    try {
      const lease = await this.client.get<Lease>(path);
      if (lease.spec?.holderIdentity !== this.identity) return;
      await this.client.replace(path, {
        ...lease,
        spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime() },
      });
      this.options.log.info({ lease: this.options.name }, 'released the lease');
    } catch (err) {
      if (isStatus(err, 404)) return; // never created: nothing to release
      // The lease then expires by itself after its duration.
      this.options.log.warn({ lease: this.options.name, err: String(err) }, 'could not release the lease');
    }
  }
}
