import { describe, expect, it } from 'vitest';
import { proxyTotals } from './prometheus-text.js';

const TEXT = `# HELP mcp_server_operation_duration MCP request duration
# TYPE mcp_server_operation_duration histogram
mcp_server_operation_duration_bucket{mcp_method_name="tools/call",gen_ai_tool_name="echo",le="0.01"} 3
mcp_server_operation_duration_sum{mcp_method_name="tools/call",gen_ai_tool_name="echo"} 0.03
mcp_server_operation_duration_count{mcp_method_name="tools/call",gen_ai_tool_name="echo"} 3
mcp_server_operation_duration_sum{mcp_method_name="tools/call",gen_ai_tool_name="get_env",error_type="-32602"} 0.002
mcp_server_operation_duration_count{mcp_method_name="tools/call",gen_ai_tool_name="get_env",error_type="-32602"} 1
mcp_server_operation_duration_count{mcp_method_name="initialize",gen_ai_tool_name="a \\"error_type=\\"x"} 2
moat_upstream_errors_total{http_response_status_code="502"} 9
`;

describe("a proxy's /metrics text", () => {
  it('gives the requests, the failed ones (error_type set) and the summed seconds', () => {
    expect(proxyTotals(TEXT)).toEqual({ requests: 6, errors: 1, seconds: 0.032 });
  });

  it('is all zero without the histogram', () => {
    expect(proxyTotals('# nothing here\nother_total 4\n')).toEqual({ requests: 0, errors: 0, seconds: 0 });
  });
});
