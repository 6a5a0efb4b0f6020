/**
 * The audit page: recent audit events of every workload, newest first, filtered by user, tool,
 * decision and workload; a denial shows the policy that refused it. Refreshed every few seconds.
 */
import type { AuditRow } from '../shared.js';
import { getJson } from './api.js';
import { el } from './dom.js';

const REFRESH_MS = 3000;
const COLUMNS = ['Time', 'Workload', 'User', 'Event', 'Tool / target', 'Decision', 'Reason'];
const DECISIONS = ['', 'success', 'denied', 'failure', 'error', 'application_error'];

export function auditPage(main: HTMLElement): void {
  const user = el('input', { id: 'f-user', name: 'user', type: 'text', autocomplete: 'off' });
  const tool = el('input', { id: 'f-tool', name: 'tool', type: 'text', autocomplete: 'off' });
  const workload = el('input', { id: 'f-workload', name: 'workload', type: 'text', autocomplete: 'off' });
  const decision = el(
    'select',
    { id: 'f-decision', name: 'decision' },
    ...DECISIONS.map((d) => el('option', { value: d }, d || 'any')),
  );
  const filters = el(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter audit events' },
    ...(
      [
        ['f-user', 'User', user],
        ['f-tool', 'Tool', tool],
        ['f-decision', 'Decision', decision],
        ['f-workload', 'Workload', workload],
      ] as const
    ).map(([id, label, control]) => el('div', { class: 'field' }, el('label', { for: id }, label), control)),
  );
  const status = el('p', { id: 'status', role: 'status', 'aria-live': 'polite' });
  const body = el('tbody');
  const table = el(
    'table',
    { 'aria-label': 'Audit events' },
    el('thead', {}, el('tr', {}, ...COLUMNS.map((c) => el('th', { scope: 'col' }, c)))),
    body,
  );
  main.append(filters, status, table);

  // Answers can arrive out of order (typing starts a request per key): only the latest is shown.
  let latest = 0;
  const refresh = async () => {
    const asked = ++latest;
    const query = new URLSearchParams();
    for (const [key, control] of [
      ['user', user],
      ['tool', tool],
      ['decision', decision],
      ['workload', workload],
    ] as const)
      if (control.value) query.set(key, control.value);
    const answer = await getJson<AuditRow[]>(`/api/audit?${query.toString()}`);
    if (asked !== latest) return;
    if (!answer.ok) {
      status.textContent = `Could not read the audit events: ${answer.message}`;
      return;
    }
    status.textContent = `${answer.value.length} event${answer.value.length === 1 ? '' : 's'}`;
    body.replaceChildren(
      ...(answer.value.length
        ? answer.value.map(rowElement)
        : [
            el(
              'tr',
              {},
              el(
                'td',
                { colspan: String(COLUMNS.length) },
                'No audit events. Workloads record them when run with --enable-audit or --audit-config.',
              ),
            ),
          ]),
    );
    main.dataset.state = 'live';
  };
  filters.addEventListener('input', () => void refresh());
  filters.addEventListener('submit', (event) => event.preventDefault());
  void refresh();
  setInterval(() => void refresh(), REFRESH_MS);
}

function rowElement(row: AuditRow): HTMLTableRowElement {
  const reason =
    row.outcome === 'denied' ? `denied by ${row.denied_by || 'the proxy'} (HTTP ${row.http_status})` : '';
  return el(
    'tr',
    { 'data-state': row.outcome, 'data-workload': row.workload },
    el('td', {}, row.time),
    el('td', {}, row.workload),
    el('td', {}, row.user),
    el('td', {}, row.type),
    el('td', {}, row.target || row.method),
    el(
      'td',
      {
        class: `state state-${row.outcome === 'success' ? 'running' : row.outcome === 'denied' ? 'error' : 'unhealthy'}`,
      },
      row.outcome,
    ),
    el('td', {}, reason),
  );
}
