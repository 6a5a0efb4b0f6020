/**
 * The groups page: every group (`moat group list`) with its workloads, live from the workloads
 * feed (a workload that moves, starts or stops shows at once), and the clients registered with it.
 */
import type { GroupRow, WorkloadRow, WorkloadsSnapshot } from '../shared.js';
import { getJson } from './api.js';
import { el, localLink } from './dom.js';

const REFRESH_MS = 5000;

export function groupsPage(main: HTMLElement): void {
  const status = el('p', { id: 'status', role: 'status', 'aria-live': 'polite' });
  const list = el('div', { class: 'groups' });
  main.append(
    el(
      'p',
      { class: 'muted' },
      'Create a group with "moat group create <name>"; run into it with "moat run --group".',
    ),
    status,
    list,
  );
  let groups: GroupRow[] = [];
  let workloads: WorkloadRow[] = [];
  const render = () => {
    // A workload's group may be one the group list has not caught up with yet.
    const names = [...new Set([...groups.map((g) => g.name), ...workloads.map((w) => w.group)])].sort();
    list.replaceChildren(
      ...names.map((name) =>
        groupSection(
          name,
          groups.find((g) => g.name === name)?.clients ?? [],
          workloads.filter((w) => w.group === name),
        ),
      ),
    );
    status.textContent = `${names.length} group${names.length === 1 ? '' : 's'}`;
  };
  const refresh = async () => {
    const answer = await getJson<GroupRow[]>('/api/groups');
    if (!answer.ok) status.textContent = `Could not read the groups: ${answer.message}`;
    else groups = answer.value;
    render();
    main.dataset.state = 'live';
  };
  const events = new EventSource('/api/workloads/events');
  events.addEventListener('workloads', (event) => {
    workloads = (JSON.parse((event as MessageEvent<string>).data) as WorkloadsSnapshot).workloads;
    render();
  });
  void refresh();
  setInterval(() => void refresh(), REFRESH_MS);
}

function groupSection(name: string, clients: string[], members: WorkloadRow[]): HTMLElement {
  return el(
    'section',
    { 'aria-label': `Group ${name}`, 'data-entry': name, class: 'group' },
    el('h2', {}, name),
    el('p', { class: 'clients' }, `Clients: ${clients.join(', ') || 'none registered'}`),
    el(
      'ul',
      {},
      ...(members.length
        ? members.map((w) =>
            el(
              'li',
              { 'data-workload': w.name, 'data-state': w.status },
              localLink(`/workloads/${encodeURIComponent(w.name)}`, w.name),
              ' ',
              el('span', { class: `state state-${w.status}` }, w.status),
              w.url ? el('code', {}, ` ${w.url}`) : null,
            ),
          )
        : [el('li', {}, 'No workloads.')]),
    ),
  );
}
