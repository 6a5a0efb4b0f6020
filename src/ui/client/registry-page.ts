/**
 * The registry page: search the catalog and the user's registry (what `moat search` searches),
 * and run an entry: a form asks for the values the entry requires (secrets in password inputs,
 * never shown again), then the dashboard runs `moat run <entry>` with them. Every text is the
 * registry's and shown as text.
 */
import type { ActionResult, RegistryRow } from '../shared.js';
import { getJson, post } from './api.js';
import { el, localLink } from './dom.js';

const COLUMNS = ['Name', 'Description', 'Runs', 'Transport', 'Run'];

export function registryPage(main: HTMLElement): void {
  const term = el('input', { id: 'r-search', name: 'q', type: 'search', autocomplete: 'off' });
  const search = el(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Registry search' },
    el('div', { class: 'field' }, el('label', { for: 'r-search' }, 'Search the registry'), term),
    el('button', { type: 'submit' }, 'Search'),
  );
  const status = el('p', { id: 'status', role: 'status', 'aria-live': 'polite' });
  const body = el('tbody');
  const table = el(
    'table',
    { 'aria-label': 'Registry servers' },
    el('thead', {}, el('tr', {}, ...COLUMNS.map((c) => el('th', { scope: 'col' }, c)))),
    body,
  );
  const runner = el('section', { 'aria-label': 'Run a server', class: 'run-entry' });
  main.append(search, status, table, runner);

  let latest = 0;
  const refresh = async () => {
    const asked = ++latest;
    const answer = await getJson<{ rows: RegistryRow[]; warnings: string[] }>(
      `/api/registry?${new URLSearchParams({ q: term.value }).toString()}`,
    );
    if (asked !== latest) return;
    if (!answer.ok) {
      status.textContent = `Could not read the registry: ${answer.message}`;
      return;
    }
    const { rows, warnings } = answer.value;
    status.textContent = [`${rows.length} server${rows.length === 1 ? '' : 's'}`, ...warnings].join(' · ');
    body.replaceChildren(
      ...(rows.length
        ? rows.map((row) => rowElement(row, () => showRunForm(runner, row)))
        : [el('tr', {}, el('td', { colspan: String(COLUMNS.length) }, 'No server matches.'))]),
    );
    main.dataset.state = 'live';
  };
  search.addEventListener('submit', (event) => {
    event.preventDefault();
    void refresh();
  });
  void refresh();
}

function rowElement(row: RegistryRow, run: () => void): HTMLTableRowElement {
  const runCell = row.problem
    ? el('td', { class: 'muted', title: row.problem }, 'not runnable')
    : el('td', {}, el('button', { type: 'button', 'aria-label': `Run ${row.name}` }, 'Run'));
  runCell.querySelector('button')?.addEventListener('click', run);
  return el(
    'tr',
    { 'data-entry': row.name, 'data-state': row.status },
    el('th', { scope: 'row' }, row.name, row.version ? ` @${row.version}` : ''),
    el('td', {}, row.title ? `${row.title} — ${row.description}` : row.description),
    el('td', { class: 'url' }, row.target),
    el('td', {}, row.transport),
    runCell,
  );
}

/** The form of one entry: a workload name and each required input (secrets without echo). */
function showRunForm(section: HTMLElement, row: RegistryRow): void {
  const fields = row.inputs.map((input, i) => {
    const id = `run-input-${i}`;
    const control = el('input', {
      id,
      name: input.key,
      type: input.secret ? 'password' : 'text',
      autocomplete: input.secret ? 'new-password' : 'off',
      required: '',
    });
    const what = { env: 'environment variable', variable: 'variable', header: 'header' }[input.kind];
    return {
      input,
      control,
      element: el(
        'div',
        { class: 'field' },
        el('label', { for: id }, `${input.name} (${what}${input.secret ? ', secret' : ''})`),
        control,
        input.description ? el('small', {}, input.description) : null,
      ),
    };
  });
  const name = el('input', { id: 'run-name', name: 'name', type: 'text', autocomplete: 'off' });
  const output = el('p', { class: 'output', role: 'status', 'aria-live': 'polite' });
  const submit = el('button', { type: 'submit' }, `Run ${row.name}`);
  const form = el(
    'form',
    { 'aria-label': `Run ${row.name}` },
    el('div', { class: 'field' }, el('label', { for: 'run-name' }, 'Workload name (optional)'), name),
    ...fields.map((f) => f.element),
    fields.length ? null : el('p', {}, 'This server needs no values.'),
    submit,
    output,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      submit.disabled = true;
      output.textContent = `Running ${row.name}…`;
      const values = Object.fromEntries(fields.map((f) => [f.input.key, f.control.value]));
      const answer = await post<ActionResult>('/api/registry/run', {
        server: row.name,
        ...(name.value ? { name: name.value } : {}),
        values,
      });
      // Typed secrets leave the page once sent.
      for (const f of fields) if (f.input.secret) f.control.value = '';
      submit.disabled = false;
      output.replaceChildren(
        answer.ok ? answer.value.message : `The run failed: ${answer.message}`,
        ...(answer.ok ? [' · ', localLink('/', 'See the workloads')] : []),
      );
      form.dataset.state = answer.ok ? 'done' : 'failed';
    })();
  });
  section.replaceChildren(el('h2', {}, `Run ${row.name}`), form);
  (fields[0]?.control ?? name).focus();
}
