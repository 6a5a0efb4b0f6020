/**
 * Rounds across proxy replicas sharing Redis. The backend exchange of a call lives in the process
 * that took its first request; the client's retry may land on any replica. The holder listens on
 * `<prefix>in:<round>` while the round waits for the client; the replica that got the retry
 * subscribes to `<prefix>out:<round>`, then publishes the retry's input responses on the `in`
 * channel (PUBLISH says how many listened: none means no replica holds the round any more), and
 * waits, bounded, for the holder's answer on `out`: the next round or the final result. The round
 * id is single use (consumed before forwarding), so one retry at most is ever forwarded per round.
 * The same hand-over carries other one-shot payloads to the process waiting for them: a 2025-era
 * client's answer to a server→client request (eras/up/input-rounds.ts), under its own ids.
 */
import type { Logger } from 'pino';
import type { JsonRpcResponse } from '../../../mcp/jsonrpc.js';
import { errorMessage } from '../../../util/errors.js';
import { withTimeout } from '../../../util/timeout.js';
import type { RedisClient } from '../../sessions/redis.js';

/** What a retry hands the holder of its round. */
export interface RetryInputs {
  inputResponses: Record<string, unknown>;
  capabilities: Record<string, unknown>;
}

/**
 * Serves a payload handed over from another replica (a retry's inputs by default): the answer for
 * the client (its `id` is set by the replica that got it).
 */
export type ServeRetry<T = RetryInputs> = (payload: T) => Promise<JsonRpcResponse>;

export interface RoundRelay {
  /** Serves the payload for `id` (once) when it lands on another replica; resolves once listening. */
  listen<T = RetryInputs>(id: string, serve: ServeRetry<T>): Promise<void>;
  /** Stops listening for `id` (it expired, or was resumed here). */
  stop(id: string): void;
  /** Hands a payload to the replica listening for `id`; undefined when no replica listens. */
  forward<T = RetryInputs>(id: string, payload: T, timeoutMs: number): Promise<JsonRpcResponse | undefined>;
  close(): Promise<void>;
}

export class RedisRoundRelay implements RoundRelay {
  readonly #publisher: RedisClient;
  readonly #subscriber: RedisClient;
  readonly #prefix: string;
  readonly #commandTimeoutMs: number;
  readonly #logger: Logger;

  private constructor(
    publisher: RedisClient,
    subscriber: RedisClient,
    prefix: string,
    timeoutMs: number,
    logger: Logger,
  ) {
    this.#publisher = publisher;
    this.#subscriber = subscriber;
    this.#prefix = prefix;
    this.#commandTimeoutMs = timeoutMs;
    this.#logger = logger;
  }

  /** A relay over `client` (kept; closed with the relay) and a subscriber connection of its own. */
  static async open(
    client: RedisClient,
    options: { prefix: string; commandTimeoutMs: number; logger: Logger },
  ): Promise<RedisRoundRelay> {
    const subscriber = client.duplicate();
    subscriber.on('error', () => {});
    await withTimeout(subscriber.connect(), options.commandTimeoutMs * 3, 'Redis');
    return new RedisRoundRelay(client, subscriber, options.prefix, options.commandTimeoutMs, options.logger);
  }

  #bounded<T>(command: Promise<T>): Promise<T> {
    return withTimeout(command, this.#commandTimeoutMs, 'Redis');
  }

  async listen<T = RetryInputs>(id: string, serve: ServeRetry<T>): Promise<void> {
    const inChannel = `${this.#prefix}in:${id}`;
    const outChannel = `${this.#prefix}out:${id}`;
    await this.#bounded(
      this.#subscriber.subscribe(inChannel, (message) => {
        this.stop(id);
        void this.#serve(message, serve).then((answer) =>
          this.#bounded(this.#publisher.publish(outChannel, JSON.stringify(answer))).catch((err: unknown) =>
            this.#logger.warn(
              { err: errorMessage(err) },
              'could not hand a request round to another replica',
            ),
          ),
        );
      }),
    );
  }

  async #serve<T>(message: string, serve: ServeRetry<T>): Promise<JsonRpcResponse> {
    try {
      return await serve(JSON.parse(message) as T);
    } catch (err) {
      return {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32603, message: `The request could not continue: ${errorMessage(err)}` },
      };
    }
  }

  stop(id: string): void {
    this.#subscriber.unsubscribe(`${this.#prefix}in:${id}`).catch(() => {});
  }

  async forward<T = RetryInputs>(
    id: string,
    payload: T,
    timeoutMs: number,
  ): Promise<JsonRpcResponse | undefined> {
    const outChannel = `${this.#prefix}out:${id}`;
    let answered: (answer: JsonRpcResponse) => void = () => {};
    const answer = new Promise<JsonRpcResponse>((resolve) => (answered = resolve));
    await this.#bounded(
      this.#subscriber.subscribe(outChannel, (message) => answered(JSON.parse(message) as JsonRpcResponse)),
    );
    try {
      const listeners = await this.#bounded(
        this.#publisher.publish(`${this.#prefix}in:${id}`, JSON.stringify(payload)),
      );
      if (listeners === 0) return undefined;
      return await withTimeout(answer, timeoutMs, 'the proxy replica holding this request').catch(
        (err: unknown): JsonRpcResponse => ({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32000, message: `Upstream timeout: ${errorMessage(err)}` },
        }),
      );
    } finally {
      this.#subscriber.unsubscribe(outChannel).catch(() => {});
    }
  }

  async close(): Promise<void> {
    for (const client of [this.#subscriber, this.#publisher]) {
      if (client.isOpen) await client.close().catch(() => {});
    }
  }
}
