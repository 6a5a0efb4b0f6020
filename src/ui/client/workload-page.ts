/**
 * One workload: its state (from the live feed), its tools, prompts and resources fetched live
 * through its proxy, a form per tool to call it, its RunConfig with a download, and a live tail of
 * its proxy or server log. Everything the MCP server sent is shown as text.
 */
import type { Capabilities, ToolCallResult, ToolInfo, WorkloadsSnapshot } from '../shared.js';
import { getJson, post } from './api.js';
import { renderResult } from './content.js';
import { button, el, localLink } from './dom.js';
import { schemaForm } from './schema-form.js';

/** The log tail keeps this many lines on the page. */
const LOG_LINES = 1000;

export function workloadPage(main: HTMLElement, name: string): void {
  const base = `/api/workloads/${encodeURIComponent(name)}`;
  const state = el('p', { id: 'state', role: 'status', 'aria-live': 'polite' }, 'State: …');
  const tools = el('section', { 'aria-label': 'Tools' }, el('h2', {}, 'Tools'));
  const prompts = el('section', { 'aria-label': 'Prompts' }, el('h2', {}, 'Prompts'));
  const resources = el('section', { 'aria-label': 'Resources' }, el('h2', {}, 'Resources'));
  main.append(
    el('p', {}, localLink('/', '← All workloads')),
    state,
    tools,
    prompts,
    resources,
    runConfigSection(base, name),
    logsSection(base),
  );

  const events = new EventSource('/api/workloads/events');
  events.addEventListener('workloads', (event) => {
    const snapshot = JSON.parse((event as MessageEvent<string>).data) as WorkloadsSnapshot;
    const row = snapshot.workloads.find((w) => w.name === name);
    state.textContent = row
      ? `State: ${row.status} (${row.status_context}) · ${row.url || 'no URL'}`
      : 'State: removed';
    main.dataset.state = row?.status ?? 'removed';
  });

  const load = button('Reload tools, prompts and resources', () => void fetchCapabilities());
  tools.append(load);
  const fetchCapabilities = async () => {
    for (const section of [tools, prompts, resources]) section.querySelector('.list')?.remove();
    const answer = await getJson<Capabilities>(`${base}/capabilities`);
    if (!answer.ok) {
      tools.append(el('p', { class: 'list problem' }, `Could not list them: ${answer.message}`));
      return;
    }
    const caps = answer.value;
    tools.append(
      el(
        'div',
        { class: 'list' },
        ...(caps.tools.length ? caps.tools.map((t, i) => toolPanel(base, t, i)) : ['No tools.']),
      ),
    );
    prompts.append(
      el(
        'ul',
        { class: 'list' },
        ...(caps.prompts.length
          ? caps.prompts.map((p) =>
              el('li', {}, el('strong', {}, p.name), p.description ? ` — ${p.description}` : ''),
            )
          : [el('li', {}, 'No prompts.')]),
      ),
    );
    resources.append(
      el(
        'ul',
        { class: 'list' },
        ...(caps.resources.length
          ? caps.resources.map((r) =>
              el('li', {}, el('code', {}, r.uri), ` ${r.name}${r.mimeType ? ` (${r.mimeType})` : ''}`),
            )
          : [el('li', {}, 'No resources.')]),
      ),
    );
    main.dataset.tools = 'loaded';
  };
  void fetchCapabilities();
}

/** A tool: its name and description as text, and the form generated from its schema. */
function toolPanel(base: string, tool: ToolInfo, index: number): HTMLElement {
  const form = schemaForm(tool.inputSchema, `tool-${index}`);
  const output = el('div', { class: 'output', 'aria-live': 'polite' });
  const call = el('button', { type: 'submit' }, 'Call');
  const element = el('form', { class: 'tool', 'aria-label': `Tool ${tool.name}` }, form.fields, call, output);
  element.addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      const values = form.values();
      if (!values.ok) {
        output.replaceChildren(el('p', { class: 'problem' }, values.message));
        return;
      }
      output.replaceChildren(el('p', {}, 'Calling…'));
      const answer = await post<ToolCallResult>(`${base}/tools/call`, {
        tool: tool.name,
        arguments: values.args,
      });
      output.replaceChildren(
        answer.ok
          ? renderResult(answer.value)
          : el('p', { class: 'problem' }, `The call failed: ${answer.message}`),
      );
    })();
  });
  return el(
    'details',
    { class: 'tool-panel' },
    el(
      'summary',
      {},
      el('code', { class: 'tool-name' }, tool.name),
      tool.description ? ` — ${tool.description}` : '',
    ),
    element,
  );
}

function runConfigSection(base: string, name: string): HTMLElement {
  const text = el('pre', { class: 'runconfig' });
  const show = button('Show', () => {
    void getJson<unknown>(`${base}/runconfig`).then((answer) => {
      text.textContent = answer.ok ? JSON.stringify(answer.value, null, 2) : answer.message;
    });
  });
  const download = localLink(`${base}/runconfig?download=1`, `Export ${name}.json`);
  download.download = `${name}.json`;
  return el(
    'section',
    { 'aria-label': 'Run configuration' },
    el('h2', {}, 'Run configuration'),
    show,
    ' ',
    download,
    text,
  );
}

/** The live tail: the proxy log or the server's output, chosen with a labelled list. */
function logsSection(base: string): HTMLElement {
  const choice = el(
    'select',
    { id: 'log-source', name: 'log-source' },
    el('option', { value: 'proxy' }, 'Proxy log'),
    el('option', { value: 'server' }, 'Server output'),
  );
  const lines = el('pre', { class: 'logs', role: 'log', 'aria-label': 'Log lines', 'aria-live': 'polite' });
  let source: EventSource | undefined;
  const follow = () => {
    source?.close();
    lines.replaceChildren();
    source = new EventSource(`${base}/logs/${choice.value}`);
    source.addEventListener('line', (event) => {
      lines.append(`${(event as MessageEvent<string>).data}\n`);
      while (lines.childNodes.length > LOG_LINES) lines.firstChild?.remove();
      lines.scrollTop = lines.scrollHeight;
    });
    source.addEventListener('problem', (event) => {
      lines.append(`(${(event as MessageEvent<string>).data})\n`);
      source?.close();
    });
  };
  choice.addEventListener('change', follow);
  follow();
  return el(
    'section',
    { 'aria-label': 'Logs' },
    el('h2', {}, 'Logs'),
    el('label', { for: 'log-source' }, 'Show '),
    choice,
    lines,
  );
}
