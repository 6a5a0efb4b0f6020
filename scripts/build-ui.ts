// Bundles the dashboard's browser client (src/ui/client/) into dist/ui/assets/: one minified
// ES module and its stylesheet, served by `moat ui` itself (no CDN, works offline).
import { copyFileSync, mkdirSync, statSync } from 'node:fs';
import { build } from 'esbuild';

const out = 'dist/ui/assets';
mkdirSync(out, { recursive: true });
await build({
  entryPoints: ['src/ui/client/app.ts'],
  outfile: `${out}/app.js`,
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  platform: 'browser',
  legalComments: 'none',
});
copyFileSync('src/ui/client/app.css', `${out}/app.css`);
const size = (f: string) => statSync(`${out}/${f}`).size;
if (process.argv.includes('--sizes')) console.log(`app.js ${size('app.js')} B, app.css ${size('app.css')} B`);
