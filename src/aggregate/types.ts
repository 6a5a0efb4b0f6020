/** The aggregator's view of one member, shared by index.ts (its API) and members.ts (the watch). */
export interface AggregateMember {
  name: string;
  /** The member workload's own proxy MCP URL (streamable HTTP `/mcp`, or `/sse` for the legacy transport). */
  url: string;
  /** Its workload status says it serves (running). */
  healthy: boolean;
}
