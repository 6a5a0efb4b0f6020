/**
 * The JSON the dashboard's server sends its browser client: shared by both sides (the client
 * imports only these types, never server code).
 */

/** One row of the workloads page. */
export interface WorkloadRow {
  name: string;
  /** The truthful status, as `moat list` shows it. */
  status: string;
  status_context: string;
  /** `healthy`, `unhealthy` or `-` (not running). */
  health: string;
  transport: string;
  url: string;
  group: string;
  /** When the current run became healthy or unhealthy (ISO time); empty when not running. */
  running_since: string;
  restarts: number;
}

/** What the workloads feed sends: every workload, and why container states may be stale. */
export interface WorkloadsSnapshot {
  workloads: WorkloadRow[];
  runtime_problem?: string;
}

export const WORKLOAD_ACTIONS = ['start', 'stop', 'restart', 'remove'] as const;
export type WorkloadAction = (typeof WORKLOAD_ACTIONS)[number];

/** The answer to an action: what the CLI would have printed, or the error (`ok` false). */
export interface ActionResult {
  ok: boolean;
  message: string;
}

/** A tool as the workload lists it: every field is the server's and shown as inert text. */
export interface ToolInfo {
  name: string;
  description: string;
  inputSchema: unknown;
}

export interface Capabilities {
  tools: ToolInfo[];
  prompts: Array<{ name: string; description: string }>;
  resources: Array<{ uri: string; name: string; mimeType: string }>;
}

/** One item of a tool result's content, as MCP defines it (only the fields the page shows). */
export type ContentItem =
  | { type: 'text'; text: string }
  | { type: 'image' | 'audio'; data: string; mimeType: string }
  | { type: 'resource_link'; uri: string; name?: string }
  | { type: 'resource'; resource: { uri: string; text?: string; mimeType?: string } }
  | { type: string };

export interface ToolCallResult {
  isError: boolean;
  content: ContentItem[];
}

/** One audit event as the audit page lists it. */
export interface AuditRow {
  time: string;
  workload: string;
  user: string;
  /** The event type (mcp_tool_call, ...). */
  type: string;
  method: string;
  /** The tool, prompt or resource named. */
  target: string;
  /** success, denied, failure, error or application_error. */
  outcome: string;
  /** For a denial: the policy that refused it. */
  denied_by: string;
  http_status: number;
}

/** The audit page's filters (each optional): user and tool match as substrings. */
export interface AuditFilters {
  user?: string;
  tool?: string;
  decision?: string;
  workload?: string;
}

/** One interval of a workload's traffic on the metrics page (between two reads of its metrics). */
export interface MetricsPoint {
  /** The end of the interval (ISO time). */
  at: string;
  requests: number;
  errors: number;
  /** Mean duration of the interval's requests in milliseconds; null without requests. */
  mean_ms: number | null;
}

/** One workload on the metrics page. */
export interface WorkloadMetrics {
  name: string;
  /** `on`: read from its proxy's `/metrics`; `off`: it serves none; `unreachable`: the read failed. */
  source: 'on' | 'off' | 'unreachable';
  /** Why there are no numbers (source not `on`). */
  problem: string;
  /** Since the proxy started, as its counters say. */
  total: { requests: number; errors: number; mean_ms: number | null };
  /** The intervals of the window, oldest first. */
  points: MetricsPoint[];
}

export interface MetricsSnapshot {
  /** Seconds between two reads of a proxy's metrics. */
  interval_seconds: number;
  /** Seconds of history kept. */
  window_seconds: number;
  workloads: WorkloadMetrics[];
}

/** A value running a registry entry needs from the user (a required input without a value). */
export interface RegistryInputField {
  /** `env:NAME`, `variable:NAME` or `header:NAME`: the key of its value in a run request. */
  key: string;
  kind: 'env' | 'variable' | 'header';
  name: string;
  description: string;
  /** Typed in a password input, stored in the secrets manager, never put in arguments. */
  secret: boolean;
}

/** One registry entry on the registry page: everything is the registry's and shown as text. */
export interface RegistryRow {
  name: string;
  title: string;
  description: string;
  version: string;
  status: string;
  /** What `moat run` would run (image, npx://, uvx:// or URL) and its transport. */
  target: string;
  transport: string;
  inputs: RegistryInputField[];
  /** Why the entry cannot be run by Moat (empty when it can). */
  problem: string;
}

/** A run request: the entry, an optional workload name, and the values of its inputs by key. */
export interface RegistryRunRequest {
  server: string;
  name?: string;
  values: Record<string, string>;
}

/** One AI client on the clients page, as `moat client list` and `status` see it. */
export interface ClientRow {
  id: string;
  title: string;
  installed: boolean;
  /** Its config file (the one Moat writes). */
  file: string;
  /** The groups it is registered with. */
  groups: string[];
  /** The workloads Moat configured in its file. */
  workloads: string[];
  /** `in sync`, `missing: …`, the file's problem, or `-` (nothing registered or written). */
  state: string;
}

/** One group on the groups page (its workloads come from the live workloads feed). */
export interface GroupRow {
  name: string;
  clients: string[];
}
