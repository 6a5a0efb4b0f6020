/**
 * The dashboard's HTML: one server-rendered shell per page, holding no data and no inline
 * script or style (the Content-Security-Policy forbids both); the client script fills `main`.
 */

export const PAGES = {
  workloads: 'Workloads',
  workload: 'Workload',
  audit: 'Audit',
  metrics: 'Metrics',
  registry: 'Registry',
  clients: 'Clients',
  groups: 'Groups',
} as const;
export type PageName = keyof typeof PAGES;

/** The pages the navigation lists (one workload's page is reached from its row). */
const NAV: Partial<Record<PageName, string>> = {
  workloads: '/',
  audit: '/audit',
  metrics: '/metrics',
  registry: '/registry',
  clients: '/clients',
  groups: '/groups',
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The page shell; `params` become `data-` attributes of `main` (escaped). */
export function pageHtml(page: PageName, params: Record<string, string> = {}): string {
  const nav = (Object.entries(NAV) as Array<[PageName, string]>)
    .map(
      ([p, path]) =>
        `<a href="${path}"${p === page ? ' aria-current="page"' : ''}>${escapeHtml(PAGES[p])}</a>`,
    )
    .join('');
  const data = Object.entries(params)
    .map(([k, v]) => ` data-${k}="${escapeHtml(v)}"`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(params.workload ?? PAGES[page])} · Moat</title>
<link rel="stylesheet" href="/assets/app.css">
<script type="module" src="/assets/app.js"></script>
</head>
<body>
<header><span class="brand">Moat</span><nav aria-label="Pages">${nav}</nav></header>
<main id="main" data-page="${page}"${data}><h1>${escapeHtml(params.workload ?? PAGES[page])}</h1></main>
</body>
</html>
`;
}
