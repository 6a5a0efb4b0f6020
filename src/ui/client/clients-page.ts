/**
 * The clients page: every AI client Moat supports, whether it is installed here, the groups it
 * is registered with and the workloads Moat configured in its file (`moat client list` and
 * `status`). Changes are made with `moat client register|remove|setup`.
 */
import type { ClientRow } from '../shared.js';
import { getJson } from './api.js';
import { el, localLink } from './dom.js';

const COLUMNS = ['Client', 'Installed', 'Groups', 'Workloads configured', 'Config file', 'State'];
const REFRESH_MS = 5000;

export function clientsPage(main: HTMLElement): void {
  const status = el('p', { id: 'status', role: 'status', 'aria-live': 'polite' });
  const body = el('tbody');
  main.append(
    el(
      'p',
      { class: 'muted' },
      'Register a client with a group with "moat client register <client> --group <group>".',
    ),
    status,
    el(
      'table',
      { 'aria-label': 'AI clients' },
      el('thead', {}, el('tr', {}, ...COLUMNS.map((c) => el('th', { scope: 'col' }, c)))),
      body,
    ),
  );
  const refresh = async () => {
    const answer = await getJson<ClientRow[]>('/api/clients');
    if (!answer.ok) {
      status.textContent = `Could not read the clients: ${answer.message}`;
      return;
    }
    const installed = answer.value.filter((c) => c.installed).length;
    status.textContent = `${installed} of ${answer.value.length} clients detected on this machine`;
    body.replaceChildren(...answer.value.map(rowElement));
    main.dataset.state = 'live';
  };
  void refresh();
  setInterval(() => void refresh(), REFRESH_MS);
}

function rowElement(c: ClientRow): HTMLTableRowElement {
  const links = c.workloads.flatMap((w, i) => [
    ...(i ? [', '] : []),
    localLink(`/workloads/${encodeURIComponent(w)}`, w),
  ]);
  return el(
    'tr',
    { 'data-entry': c.id, 'data-state': c.installed ? 'installed' : 'absent' },
    el('th', { scope: 'row' }, c.title, el('small', {}, ` ${c.id}`)),
    el('td', { class: 'installed' }, c.installed ? 'yes' : 'no'),
    el('td', { class: 'groups' }, c.groups.join(', ') || '-'),
    el('td', { class: 'workloads' }, ...(links.length ? links : ['-'])),
    el('td', { class: 'url' }, c.file),
    el('td', { class: 'client-state' }, c.state),
  );
}
