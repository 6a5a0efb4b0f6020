/** The dashboard's client: fills the page shell the server rendered (`main[data-page]`). */
import { workloadPage } from './workload-page.js';
import { workloadsPage } from './workloads-page.js';

const main = document.getElementById('main');
if (main?.dataset.page === 'workloads') workloadsPage(main);
if (main?.dataset.page === 'workload') workloadPage(main, main.dataset.workload ?? '');
