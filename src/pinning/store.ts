/**
 * Where pins live. Per workload: a JSON file in Moat's state dir for `moat run` (so
 * `moat tools approve` can change it), in Redis for operator pods that have a session store,
 * else in the pod's memory (pins then last as long as the pod).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../util/atomic-file.js';
import { errorMessage, runtimeError } from '../util/errors.js';
import { withTimeout } from '../util/timeout.js';

export interface ToolPin {
  /** The approved definition's hash. */
  hash: string;
  pinnedAt: string;
  /** A different definition seen since, waiting for approval. */
  changed?: { hash: string; seenAt: string };
}

export type Pins = Record<string, ToolPin>;

export interface PinStore {
  load(): Promise<Pins>;
  /** Read-modify-write of the pins. */
  update(change: (pins: Pins) => void): Promise<void>;
}

/** The pin file of a workload. */
export function pinFile(stateDir: string, workload: string): string {
  return join(stateDir, 'pins', `${workload}.json`);
}

export class FilePinStore implements PinStore {
  constructor(readonly path: string) {}

  async load(): Promise<Pins> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw runtimeError(`cannot read the tool pins ${this.path}: ${errorMessage(err)}`);
    }
    try {
      const parsed = JSON.parse(text) as { tools?: Pins };
      return parsed.tools ?? {};
    } catch (err) {
      throw runtimeError(`the tool pins ${this.path} are not valid JSON: ${errorMessage(err)}`);
    }
  }

  async update(change: (pins: Pins) => void): Promise<void> {
    const pins = await this.load();
    change(pins);
    await writeFileAtomic(this.path, `${JSON.stringify({ version: 1, tools: pins }, null, 2)}\n`);
  }
}

export class MemoryPinStore implements PinStore {
  #pins: Pins = {};

  load(): Promise<Pins> {
    return Promise.resolve(structuredClone(this.#pins));
  }

  update(change: (pins: Pins) => void): Promise<void> {
    change(this.#pins);
    return Promise.resolve();
  }
}

/** A Redis command runner (the session store's client), injected so this layer needs no client. */
export interface PinRedis {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<unknown>;
}

/** Pins as one JSON value under `key`, shared by every replica of the workload. */
export class RedisPinStore implements PinStore {
  constructor(
    private readonly redis: PinRedis,
    private readonly key: string,
    /** Bound on one command (`session_redis.command_timeout`): a frozen Redis fails, never hangs. */
    private readonly timeoutMs: number,
  ) {}

  async load(): Promise<Pins> {
    const text = await withTimeout(this.redis.get(this.key), this.timeoutMs, 'Redis');
    return text === null ? {} : ((JSON.parse(text) as { tools?: Pins }).tools ?? {});
  }

  async update(change: (pins: Pins) => void): Promise<void> {
    const pins = await this.load();
    change(pins);
    const value = JSON.stringify({ version: 1, tools: pins });
    await withTimeout(this.redis.set(this.key, value), this.timeoutMs, 'Redis');
  }
}

/** Approves a tool's changed definition; false when the tool has no pending change. */
export async function approveTool(store: PinStore, tool: string): Promise<boolean> {
  let approved = false;
  await store.update((pins) => {
    const pin = pins[tool];
    if (!pin?.changed) return;
    pins[tool] = { hash: pin.changed.hash, pinnedAt: new Date().toISOString() };
    approved = true;
  });
  return approved;
}
