/**
 * The shapes bench/run.ts's cells share, and the contract of a cell module it loads on demand
 * (bench/policies.ts, the policy-stack cells): run.ts hands it a BenchKit and prints its rows and
 * targets in its own tables.
 */

/** One load run (bench/load.ts's output line), or the medians of several. */
export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

/** One cell: a proxied path at one concurrency against direct runs of the same rounds. */
export interface Row {
  path: string;
  concurrency: number;
  direct: LoadResult;
  proxied: LoadResult;
}

/** One line of the report's target table; `met` undefined when the figure is only stated. */
export interface TargetResult {
  target: string;
  measured: string;
  met: boolean | undefined;
}

export interface PolicyBench {
  rows: Row[];
  targets: TargetResult[];
  /** The Markdown section the module prints (its cells and per-policy costs). */
  lines: string[];
}

export interface ProxyProcess {
  url: string;
  stop(): Promise<void>;
}

/** run.ts's helpers, handed to a cell module (importing run.ts would run the bench). */
export interface BenchKit {
  startServer(file: string, ...args: string[]): Promise<string>;
  startProxy(
    backend: object,
    embed: 'supervisor' | 'library',
    extraConfig?: object,
    dist?: string,
  ): Promise<ProxyProcess>;
  startOtlpSink(): Promise<{ url: string; close(): Promise<void> }>;
  compare(
    concurrency: number,
    direct: object,
    proxied: Array<[path: string, target: object]>,
  ): Promise<Row[]>;
  rowTable(rows: Row[]): string[];
  /** One load-generator run (bench/load.ts's job). */
  load(job: object): Promise<LoadResult>;
  /** The warm-up requests a row's proxied runs sent besides the measured ones (all rounds). */
  warmups(row: Row): number;
}
