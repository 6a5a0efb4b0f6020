/** Writes deploy/crds/<group>_<plural>.yaml for every operator kind (run with `npm run gen:crds`). */
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ALL_KINDS } from '../src/operator/crd/index.js';
import { CRD_DIRECTORY, crdFileName, renderCrdYaml } from '../src/operator/crd/crd-manifest.js';

await mkdir(CRD_DIRECTORY, { recursive: true });
const wanted = new Set(ALL_KINDS.map(crdFileName));
for (const stale of (await readdir(CRD_DIRECTORY)).filter((f) => f.endsWith('.yaml') && !wanted.has(f))) {
  await rm(join(CRD_DIRECTORY, stale));
  console.log(`removed ${join(CRD_DIRECTORY, stale)}`);
}
for (const kind of ALL_KINDS) {
  const file = join(CRD_DIRECTORY, crdFileName(kind));
  await writeFile(file, renderCrdYaml(kind));
  console.log(`wrote ${file}`);
}
