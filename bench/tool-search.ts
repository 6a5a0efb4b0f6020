/**
 * Tool search's measured recall and listing sizes (`MOAT_BENCH_ONLY=tool-search npm run bench`,
 * and part of the full run). The tool lists are read live, over stdio with the MCP SDK client,
 * from real servers of the built-in catalog installed from their registries (catalog-servers.ts);
 * their tools together are what an aggregate endpoint of those servers would list. Each task of
 * tool-search-tasks.json (a request as a user would phrase it, and the tools that do it) goes
 * through the tool search policy itself: find_tool → tools/list → the ranked CallToolResult.
 *
 * recall@k: the share of tasks with one of their tools among find_tool's first k results.
 * Sizes: bytes of the JSON a client reads (the `tools/list` result, and one find_tool result),
 * with tokens estimated as bytes / 4 (no tokenizer: a rough rule for English and JSON).
 */
import { readFileSync } from 'node:fs';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonRpcRequest } from '../src/mcp/jsonrpc.js';
import type { MessageContext } from '../src/mcp/policy.js';
import {
  createToolSearchPolicy,
  TOOL_SEARCH_TOOLS,
  ToolIndex,
  toolDocument,
} from '../src/toolsearch/index.js';
import { catalogServerTools, type ServerTools } from './catalog-servers.js';

/** Six or more real catalog servers (issue 32 asks for at least six). */
export const TOOL_SEARCH_SERVERS = [
  'everything',
  'fetch',
  'time',
  'filesystem',
  'memory',
  'sequential-thinking',
  'git',
] as const;

interface Task {
  task: string;
  tools: string[];
  /** Written before the query expansion, never used to tune it. */
  heldOut?: boolean;
}

const TASKS = (
  JSON.parse(readFileSync(new URL('./tool-search-tasks.json', import.meta.url), 'utf8')) as { tasks: Task[] }
).tasks;

const CONTEXT: MessageContext = {
  sessionId: 'bench',
  identity: { subject: 'bench', groups: [], claims: {}, local: true },
  serverName: 'bench',
  transport: 'streamable-http',
  clientAddress: '127.0.0.1',
  headers: {},
};

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const tokens = (n: number) => Math.round(n / 4);

/** find_tool's answer for a query over these tools, through the policy. */
async function findTool(tools: readonly Tool[], query: string, limit: number, id: number) {
  const policy = createToolSearchPolicy();
  const call: JsonRpcRequest = {
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'find_tool', arguments: { query, limit } },
  };
  const verdict = await policy.onClientMessage!(call, CONTEXT);
  if (verdict.action !== 'rewrite')
    throw new Error(`find_tool was not rewritten: ${JSON.stringify(verdict)}`);
  const answer = await policy.onServerResponse!(
    { jsonrpc: '2.0', id, result: { tools } },
    verdict.message as JsonRpcRequest,
    CONTEXT,
  );
  const result = answer.result as { structuredContent: { tools: Array<{ name: string }> } };
  return { names: result.structuredContent.tools.map((t) => t.name), result };
}

type Recall = Record<1 | 3 | 5, number>;

export interface ToolSearchReport {
  servers: ServerTools[];
  tasks: number;
  heldOut: number;
  /** find_tool as shipped (BM25 with the query expansion), over all tasks and the held-out ones. */
  recall: { all: Recall; heldOut: Recall };
  /** BM25 on the query's own words only. */
  plain: { all: Recall; heldOut: Recall };
  misses: Array<{ task: string; expected: string[]; got: string[] }>;
  listingBytes: { without: number; with: number; findResult: number };
}

/** recall@1, @3, @5 of rankings (one per task, in TASKS order) over the tasks `which` keeps. */
function recallOf(rankings: string[][], which: (task: Task) => boolean): Recall {
  const hits = { 1: 0, 3: 0, 5: 0 };
  let n = 0;
  for (const [i, task] of TASKS.entries()) {
    if (!which(task)) continue;
    n++;
    const ranked = rankings[i] ?? [];
    for (const k of [1, 3, 5] as const) if (ranked.slice(0, k).some((t) => task.tools.includes(t))) hits[k]++;
  }
  return { 1: hits[1] / n, 3: hits[3] / n, 5: hits[5] / n };
}

export async function measureToolSearch(): Promise<ToolSearchReport> {
  const servers = await catalogServerTools(TOOL_SEARCH_SERVERS);
  const tools = servers.flatMap((s) => s.tools);
  const names = new Set(tools.map((t) => t.name));
  if (names.size !== tools.length) throw new Error('two catalog servers list a tool of the same name');
  for (const task of TASKS) {
    const unknown = task.tools.filter((t) => !names.has(t));
    if (unknown.length > 0)
      throw new Error(`task "${task.task}" expects tools no server lists: ${unknown.join(', ')}`);
  }
  const shipped: string[][] = [];
  const plain: string[][] = [];
  const plainIndex = new ToolIndex(tools.map((t) => toolDocument(t as unknown as Record<string, unknown>)));
  const misses: ToolSearchReport['misses'] = [];
  let findBytes = 0;
  for (const [i, task] of TASKS.entries()) {
    const { names: ranked, result } = await findTool(tools, task.task, 5, i);
    shipped.push(ranked);
    plain.push(plainIndex.search(task.task, 5, { expand: false }).map((r) => r.name));
    findBytes += bytes(result);
    if (!ranked.some((n) => task.tools.includes(n)))
      misses.push({
        task: `${task.heldOut ? '(held out) ' : ''}${task.task}`,
        expected: task.tools,
        got: ranked,
      });
  }
  const all = () => true;
  const held = (t: Task) => t.heldOut === true;
  return {
    servers,
    tasks: TASKS.length,
    heldOut: TASKS.filter(held).length,
    recall: { all: recallOf(shipped, all), heldOut: recallOf(shipped, held) },
    plain: { all: recallOf(plain, all), heldOut: recallOf(plain, held) },
    misses,
    listingBytes: {
      without: bytes({ tools }),
      with: bytes({ tools: TOOL_SEARCH_TOOLS }),
      findResult: Math.round(findBytes / TASKS.length),
    },
  };
}

const pct = (x: number) => `${(x * 100).toFixed(0)} %`;
const row = (label: string, tasks: string, r: Recall) =>
  `| ${label} | ${tasks} | ${pct(r[1])} | ${pct(r[3])} | ${pct(r[5])} |`;

/** The report's Markdown lines. */
export function toolSearchLines(r: ToolSearchReport): string[] {
  const total = r.servers.reduce((n, s) => n + s.tools.length, 0);
  const { without, with: withSearch, findResult } = r.listingBytes;
  return [
    `Tool search over ${r.servers.length} catalog servers' live tool lists (${total} tools: ${r.servers
      .map((s) => `${s.id} ${s.tools.length}`)
      .join(', ')}), ${r.tasks} tasks (bench/tool-search-tasks.json):`,
    '',
    `| find_tool ranking | tasks | recall@1 | recall@3 | recall@5 |`,
    '|---|---|---|---|---|',
    row('find_tool (BM25 + query expansion)', `all ${r.tasks}`, r.recall.all),
    row('find_tool (BM25 + query expansion)', `held out ${r.heldOut}`, r.recall.heldOut),
    row("BM25 on the query's own words", `all ${r.tasks}`, r.plain.all),
    row("BM25 on the query's own words", `held out ${r.heldOut}`, r.plain.heldOut),
    '',
    '| what a client reads (JSON bytes; tokens ≈ bytes / 4) | bytes | ≈ tokens |',
    '|---|---|---|',
    `| tools/list, without tool search (all ${total} tools) | ${without} | ${tokens(without)} |`,
    `| tools/list, with tool search (find_tool and call_tool) | ${withSearch} | ${tokens(withSearch)} |`,
    `| one find_tool result, limit 5 (mean over the tasks) | ${findResult} | ${tokens(findResult)} |`,
    '',
    ...(r.misses.length === 0
      ? ['Every task found its tool in the first 5.']
      : [
          'Not in the first 5:',
          ...r.misses.map(
            (m) => `- "${m.task}": wanted ${m.expected.join(' or ')}; got ${m.got.join(', ') || 'nothing'}`,
          ),
        ]),
  ];
}

/** `MOAT_BENCH_ONLY=tool-search` and the full run's section. */
export async function toolSearchSection(): Promise<string[]> {
  process.stderr.write('  tool search: catalog servers, recall and sizes\n');
  return toolSearchLines(await measureToolSearch());
}
