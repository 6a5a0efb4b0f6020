/** The dashboard's client: fills the page shell the server rendered (`main[data-page]`). */
import { workloadsPage } from './workloads-page.js';

const main = document.getElementById('main');
if (main?.dataset.page === 'workloads') workloadsPage(main);
