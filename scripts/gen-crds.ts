/**
 * Writes <group>_<plural>.yaml for every operator kind into the Helm chart's crds/ folder
 * (deploy/helm/moat-operator/crds) and the generated field reference in docs/operator-resources.md
 * (run with `npm run gen:crds`).
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ALL_KINDS } from '../src/operator/crd/index.js';
import { CRD_DIRECTORY, crdFileName, renderCrdYaml } from '../src/operator/crd/crd-manifest.js';
import {
  REFERENCE_DOCUMENT,
  renderFieldReference,
  replaceFieldReference,
} from '../src/operator/crd/field-reference.js';

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
const document = await readFile(REFERENCE_DOCUMENT, 'utf8');
await writeFile(REFERENCE_DOCUMENT, replaceFieldReference(document, renderFieldReference(ALL_KINDS)));
console.log(`updated ${REFERENCE_DOCUMENT}`);
