/**
 * The workloads page: a table kept current by the server's event stream (any change, from the
 * dashboard or from the CLI, arrives there), with start, stop, restart and remove per row.
 */
import type { ActionResult, WorkloadAction, WorkloadRow, WorkloadsSnapshot } from '../shared.js';
import { post } from './api.js';
import { button, el, localLink } from './dom.js';

const COLUMNS = ['Name', 'State', 'Health', 'Transport', 'URL', 'Group', 'Uptime', 'Restarts', 'Actions'];
const UP = new Set(['running', 'unhealthy']);

export function workloadsPage(main: HTMLElement): void {
  const status = el('p', { id: 'status', role: 'status', 'aria-live': 'polite' });
  const problem = el('p', { class: 'problem', role: 'alert' });
  const body = el('tbody');
  const table = el(
    'table',
    { 'aria-label': 'Workloads' },
    el('thead', {}, el('tr', {}, ...COLUMNS.map((c) => el('th', { scope: 'col' }, c)))),
    body,
  );
  const confirm = removalDialog();
  main.append(status, problem, table, confirm.dialog);

  let rows: WorkloadRow[] = [];
  const busy = new Set<string>();
  const render = () => {
    body.replaceChildren(
      ...(rows.length === 0
        ? [
            el(
              'tr',
              {},
              el('td', { colspan: String(COLUMNS.length) }, 'No workloads. Start one with "moat run".'),
            ),
          ]
        : rows.map((row) => rowElement(row, busy.has(row.name), act))),
    );
  };
  const act = (name: string, action: WorkloadAction) => {
    void (async () => {
      if (action === 'remove' && !(await confirm.ask(name))) return;
      busy.add(name);
      render();
      status.textContent = `${verbing(action)} ${name}…`;
      const result = await post<ActionResult>(`/api/workloads/${encodeURIComponent(name)}/${action}`);
      busy.delete(name);
      status.textContent = result.ok
        ? result.value.message || `${action} ${name}: done`
        : `${action} ${name} failed: ${result.message}`;
      render();
    })();
  };

  const events = new EventSource('/api/workloads/events');
  events.addEventListener('workloads', (event) => {
    const snapshot = JSON.parse((event as MessageEvent<string>).data) as WorkloadsSnapshot;
    rows = snapshot.workloads;
    problem.textContent = snapshot.runtime_problem
      ? `Container states not checked: ${snapshot.runtime_problem}`
      : '';
    render();
    main.dataset.state = 'live';
  });
  events.addEventListener('error', () => (status.textContent = 'Connection to moat ui lost; retrying…'));
  // Uptime moves on without an event.
  setInterval(() => {
    for (const cell of body.querySelectorAll<HTMLElement>('td.uptime')) {
      cell.textContent = uptime(cell.dataset.since ?? '');
    }
  }, 1000);
}

function rowElement(
  row: WorkloadRow,
  busy: boolean,
  act: (name: string, action: WorkloadAction) => void,
): HTMLTableRowElement {
  const up = UP.has(row.status);
  const actions: Array<[WorkloadAction, boolean]> = [
    ['start', !up],
    ['stop', up],
    ['restart', true],
    ['remove', true],
  ];
  const since = el('td', { class: 'uptime' }, uptime(row.running_since));
  since.dataset.since = row.running_since;
  return el(
    'tr',
    { 'data-workload': row.name, 'data-state': row.status },
    el('th', { scope: 'row' }, localLink(`/workloads/${encodeURIComponent(row.name)}`, row.name)),
    el('td', { class: `state state-${row.status}`, title: row.status_context }, row.status),
    el('td', { title: row.status === 'unhealthy' ? row.status_context : '' }, row.health),
    el('td', {}, row.transport || '-'),
    el('td', { class: 'url' }, row.url || '-'),
    el('td', {}, row.group),
    since,
    el('td', {}, String(row.restarts)),
    el(
      'td',
      { class: 'actions' },
      ...actions
        .filter(([, shown]) => shown)
        .map(([action]) =>
          button(action, () => act(row.name, action), {
            'aria-label': `${action} ${row.name}`,
            ...(action === 'remove' ? { class: 'danger' } : {}),
            ...(busy ? { 'aria-busy': 'true' } : {}),
          }),
        ),
    ),
  );
}

/** The confirmation before a removal: a modal dialog, Cancel focused first. */
function removalDialog(): { dialog: HTMLDialogElement; ask: (name: string) => Promise<boolean> } {
  const text = el('p', { id: 'confirm-text' });
  const cancel = el('button', { type: 'button' }, 'Cancel');
  const remove = el('button', { type: 'button', class: 'danger' }, 'Remove');
  const dialog = el(
    'dialog',
    { 'aria-describedby': 'confirm-text', 'aria-label': 'Confirm removal' },
    text,
    el('div', { class: 'buttons' }, cancel, remove),
  );
  cancel.addEventListener('click', () => dialog.close('cancel'));
  remove.addEventListener('click', () => dialog.close('remove'));
  return {
    dialog,
    ask: (name) =>
      new Promise((resolve) => {
        text.textContent = `Remove workload "${name}"? Its container, run configuration, status and logs are deleted.`;
        dialog.returnValue = '';
        dialog.addEventListener('close', () => resolve(dialog.returnValue === 'remove'), { once: true });
        dialog.showModal();
        cancel.focus();
      }),
  };
}

function verbing(action: WorkloadAction): string {
  return { start: 'Starting', stop: 'Stopping', restart: 'Restarting', remove: 'Removing' }[action];
}

/** "3d 4h", "2h 5m", "4m 10s", "12s"; "-" when not running. */
export function uptime(since: string): string {
  const start = Date.parse(since);
  if (!since || Number.isNaN(start)) return '-';
  let s = Math.max(0, Math.floor((Date.now() - start) / 1000));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s %= 86400) / 3600);
  const m = Math.floor((s %= 3600) / 60);
  s %= 60;
  if (d) return `${d}d ${h}h`;
  if (h) return `${h}h ${m}m`;
  if (m) return `${m}m ${s}s`;
  return `${s}s`;
}
