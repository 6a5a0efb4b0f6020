/**
 * The egress proxy image, built on demand from this host's Node binary (no registry, no base
 * image) and tagged by content, so it is built once per Node binary and proxy version.
 */
import { createHash } from 'node:crypto';
import { errorMessage, runtimeError } from '../../util/errors.js';
import { EngineApiError, segment, type EngineApi } from '../docker/api.js';
import { NODE_IN_IMAGE, nodeHostFiles, nodeHostIdentity, nodeRootfsTar } from './node-rootfs.js';
import { EGRESS_PROXY_JS } from './proxy-source.js';

const REPOSITORY = 'localhost/moat-egress';
const SCRIPT = '/app/egress.mjs';

export async function ensureEgressImage(api: EngineApi): Promise<string> {
  const hostFiles = nodeHostFiles();
  const hash = createHash('sha256');
  for (const part of [...nodeHostIdentity(hostFiles), EGRESS_PROXY_JS]) hash.update(`${part.length}:${part}`);
  const tag = hash.digest('hex').slice(0, 16);
  const ref = `${REPOSITORY}:${tag}`;
  try {
    await api.json('GET', `/images/${segment(ref)}/json`);
    return ref;
  } catch (err) {
    if (!(err instanceof EngineApiError && err.statusCode === 404))
      throw runtimeError(`cannot inspect image ${ref}: ${errorMessage(err)}`, { cause: err });
  }
  try {
    const tar = nodeRootfsTar({ [SCRIPT]: Buffer.from(EGRESS_PROXY_JS) }, hostFiles);
    // Imported untagged, then tagged by ID: Podman ignores the import's `tag` parameter.
    const progress = await api.stream('POST', '/images/create', {
      query: { fromSrc: '-', changes: [`ENTRYPOINT ["${NODE_IN_IMAGE}","${SCRIPT}"]`, 'USER 65534:65534'] },
      body: tar,
    });
    let output = '';
    for await (const chunk of progress) output += String(chunk);
    const failure = /"error"\s*:\s*"([^"]+)"/.exec(output);
    if (failure) throw new Error(failure[1]);
    const id = /"(?:id|status)"\s*:\s*"(sha256:[0-9a-f]{64})"/.exec(output)?.[1];
    if (!id) throw new Error(`the engine did not report the imported image's ID (${output.trim()})`);
    await api.json('POST', `/images/${segment(id)}/tag`, { query: { repo: REPOSITORY, tag } });
  } catch (err) {
    throw runtimeError(`cannot build the egress proxy image ${ref}: ${errorMessage(err)}`, { cause: err });
  }
  return ref;
}
