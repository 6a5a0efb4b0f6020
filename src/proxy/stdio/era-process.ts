/**
 * The 2026-07-28 process of a dual-era stdio server.
 *
 * A stdio server process speaks one era, picked by the first message it reads. The main process
 * gets `initialize` (mux.ts), so a server that accepts it serves 2025 sessions natively. When the
 * backend can start another process of the same server (`BackendSpec.startProcess`: a container
 * workload execs the container's own command inside it), the first 2026-07-28 request in front
 * of such a server starts one more and asks it `server/discover` as its first message (a
 * multiplexer with `discoverOnly`): a server that names 2026-07-28 there is dual-era, and every
 * 2026-07-28 request (`subscriptions/listen` included) goes to that process as sent, so its
 * 2026 clients lose nothing to the bridge. A server that does not (a 2025-only one) has the
 * process stopped and its 2026 clients bridged, as before; that verdict is kept until the main
 * process is re-attached (it may be a new, upgraded server).
 *
 * The process is restarted when its pipes end (the upstream's bounded re-attach), and the
 * requests it had in flight fail at once, saying so. When restarting gives up, 2026-07-28
 * requests fail at once with a JSON-RPC error that says so, until the first one after
 * `retryAfterMs` starts a new process. A process that cannot start at all leaves the request
 * bridged (and is tried again after `retryAfterMs`). Its stderr is logged line by line,
 * each line bounded. `close()` ends it with the proxy.
 */
import type { Logger } from 'pino';
import type { StdioPipes } from '../../mcp/stdio.js';
import type { MessagePolicy } from '../../mcp/policy.js';
import { errorMessage } from '../../util/errors.js';
import { STATELESS_REVISION } from '../../mcp/revisions.js';
import { StdioUpstream } from './attach.js';
import { LineSplitter } from './framing.js';
import { Multiplexer } from './mux.js';
import { RpcFailure } from './session.js';

/**
 * A stderr line is logged up to this many characters (`truncated`: its length); one longer than
 * this many bytes across reads is dropped unread (said so), so memory stays bounded.
 */
export const STDERR_LINE_BYTES = 16 * 1024;

export interface EraProcessOptions {
  /** Starts another process of the server (`BackendSpec.startProcess`). */
  start(): Promise<StdioPipes>;
  policies: readonly MessagePolicy[];
  requestTimeoutMs: number;
  logger: Logger;
  /** The re-attach policy of the process's pipes (StdioUpstream's options). */
  reattach?: { initialBackoffMs?: number; maxBackoffMs?: number; maxAttempts?: number };
  /** How long a process that could not start (or gave up restarting) is left before trying again (default 30 s). */
  retryAfterMs?: number;
}

interface Running {
  upstream: StdioUpstream;
  mux: Multiplexer;
  /** When its upstream gave up re-attaching. */
  failed: { at?: number };
}

export class EraProcess {
  #verdict: 'unknown' | 'dual' | 'single' = 'unknown';
  #running?: Running;
  #probe?: Promise<Multiplexer | undefined>;
  #startFailedAt?: number;
  #closed = false;
  readonly #o: EraProcessOptions;
  readonly #log: Logger;

  constructor(options: EraProcessOptions) {
    this.#o = options;
    this.#log = options.logger.child({ process: STATELESS_REVISION });
  }

  /** Whether the server showed itself dual-era (its second process answered `server/discover`). */
  get dual(): boolean {
    return this.#verdict === 'dual';
  }

  /**
   * The multiplexer of the server's 2026-07-28 process, started and asked `server/discover` on
   * first use (concurrent callers share one start); undefined when the request is to be bridged:
   * the server speaks no 2026-07-28, or its second process could not start.
   */
  multiplexer(): Promise<Multiplexer | undefined> {
    if (this.#closed || this.#verdict === 'single') return Promise.resolve(undefined);
    const running = this.#running;
    const retryAfter = this.#o.retryAfterMs ?? 30_000;
    if (running) {
      const failedAt = running.failed.at;
      if (failedAt === undefined || Date.now() - failedAt < retryAfter) {
        // Down for good: its requests are refused at once with the reason (never a hang).
        return Promise.resolve(running.mux);
      }
      this.#running = undefined;
      void running.upstream.close();
    } else if (this.#startFailedAt !== undefined && Date.now() - this.#startFailedAt < retryAfter) {
      return Promise.resolve(undefined);
    }
    this.#probe ??= this.#startAndProbe().finally(() => {
      this.#probe = undefined;
    });
    return this.#probe;
  }

  /** The main process was re-attached (perhaps a new server): a "not dual-era" verdict is asked again. */
  mainReattached(): void {
    if (this.#verdict === 'single') this.#verdict = 'unknown';
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#probe?.catch(() => undefined);
    const running = this.#running;
    this.#running = undefined;
    await running?.upstream.close();
  }

  async #startAndProbe(): Promise<Multiplexer | undefined> {
    const log = this.#log;
    const failed: Running['failed'] = {};
    const mux = new Multiplexer({
      send: (message) => upstream.send(message),
      policies: this.#o.policies,
      requestTimeoutMs: this.#o.requestTimeoutMs,
      logger: log,
      discoverOnly: true,
    });
    const upstream: StdioUpstream = new StdioUpstream({
      connect: () => this.#startOne(),
      logger: log,
      onMessage: (message, line) => mux.onUpstreamMessage(message, line),
      // Its pipes end with the process: what was written to it will never be answered.
      onEnded: () =>
        mux.failInFlight(
          `its ${STATELESS_REVISION} process ended while the request was in flight (it is restarted; send the request again)`,
        ),
      // A new process: asked server/discover before anything else reaches it.
      onReattached: () => {
        mux.reattached();
        mux
          .ensureInitialized()
          .catch((err: unknown) =>
            log.warn({ err: errorMessage(err) }, 'the restarted process refused server/discover'),
          );
      },
      onFailed: (reason) => {
        failed.at = Date.now();
        mux.upstreamFailed(`its ${STATELESS_REVISION} process ended (${reason})`);
      },
      ...this.#o.reattach,
    });
    try {
      await upstream.start();
      await mux.ensureInitialized();
    } catch (err) {
      await upstream.close();
      if (err instanceof RpcFailure && err.httpStatus !== 503) {
        this.#verdict = 'single';
        log.info(
          { reason: err.error.message },
          `a second process of the stdio server speaks no ${STATELESS_REVISION}: its ${STATELESS_REVISION} clients are bridged`,
        );
      } else {
        this.#startFailedAt = Date.now();
        log.warn(
          { err: errorMessage(err) },
          `could not start the stdio server's ${STATELESS_REVISION} process; its ${STATELESS_REVISION} requests are bridged for now`,
        );
      }
      return undefined;
    }
    if (this.#closed) {
      await upstream.close();
      return undefined;
    }
    this.#verdict = 'dual';
    this.#startFailedAt = undefined;
    this.#running = { upstream, mux, failed };
    log.info(
      `the stdio server is dual-era: a second process serves its ${STATELESS_REVISION} clients natively`,
    );
    return mux;
  }

  /** One process; its stderr (if the attachment carries it) is logged line by line. */
  async #startOne(): Promise<StdioPipes> {
    const pipes = await this.#o.start();
    const stderr = pipes.stderr;
    if (stderr) {
      const splitter = new LineSplitter(
        (line) =>
          line.length > STDERR_LINE_BYTES
            ? this.#log.info(
                { stderr: line.slice(0, STDERR_LINE_BYTES), truncated: line.length },
                'stdio server stderr',
              )
            : this.#log.info({ stderr: line }, 'stdio server stderr'),
        (bytes) => this.#log.warn({ bytes }, 'stdio server wrote an oversized stderr line; dropped'),
        STDERR_LINE_BYTES,
      );
      stderr.on('data', (chunk: Buffer) => splitter.push(chunk));
      stderr.on('error', (err) => this.#log.debug({ err: errorMessage(err) }, 'stdio server stderr error'));
    }
    return pipes;
  }
}
