/**
 * Writes deploy/manifests/moat-operator.yaml, the plain manifests for users without Helm, by
 * rendering the chart with its default values (run with `npm run gen:manifests`; needs the helm
 * that scripts/helm.sh builds).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { PLAIN_MANIFESTS, renderPlainManifests } from '../test/support/helm.js';

await mkdir(dirname(PLAIN_MANIFESTS), { recursive: true });
await writeFile(PLAIN_MANIFESTS, renderPlainManifests());
console.log(`wrote ${PLAIN_MANIFESTS}`);
