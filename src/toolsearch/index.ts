/** Tool search (`tool_search`): the find_tool/call_tool policy and the ranking it uses. */
export {
  CALL_TOOL,
  createToolSearchPolicy,
  FIND_TOOL,
  TOOL_SEARCH_POLICY,
  TOOL_SEARCH_TOOLS,
  toolDocument,
} from './policy.js';
export { ToolIndex, terms, type RankedTool, type ToolDocument } from './bm25.js';
