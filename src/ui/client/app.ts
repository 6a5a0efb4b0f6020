/** The dashboard's client: fills the page shell the server rendered (`main[data-page]`). */
import { auditPage } from './audit-page.js';
import { clientsPage } from './clients-page.js';
import { groupsPage } from './groups-page.js';
import { metricsPage } from './metrics-page.js';
import { registryPage } from './registry-page.js';
import { workloadPage } from './workload-page.js';
import { workloadsPage } from './workloads-page.js';

const main = document.getElementById('main');
if (main?.dataset.page === 'workloads') workloadsPage(main);
if (main?.dataset.page === 'workload') workloadPage(main, main.dataset.workload ?? '');
if (main?.dataset.page === 'audit') auditPage(main);
if (main?.dataset.page === 'metrics') metricsPage(main);
if (main?.dataset.page === 'registry') registryPage(main);
if (main?.dataset.page === 'clients') clientsPage(main);
if (main?.dataset.page === 'groups') groupsPage(main);
