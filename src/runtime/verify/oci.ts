/**
 * The little of the OCI distribution API image verification needs: an image's manifest digest
 * and cosign's signature artifact for it (the `sha256-<hex>.sig` tag), read anonymously (with
 * the registry's token dance when it asks for one). Plain HTTP only for loopback registries.
 */
import { createHash } from 'node:crypto';
import { runtimeError } from '../../util/errors.js';
import { isLoopbackHost } from '../../util/net.js';
import { parseImageRef } from '../image-ref.js';

const MANIFEST_TYPES = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');

/** Every registry request has a bound. */
const REQUEST_TIMEOUT_MS = 30_000;
/** Manifests and signature payloads are small; anything bigger is not what we asked for. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface RemoteImage {
  registry: string;
  /** Repository path inside the registry (`org/server`). */
  repository: string;
  /** Tag or digest to resolve. */
  reference: string;
}

/** `ghcr.io/org/server:1.0` → registry, repository, reference (Docker Hub's defaults applied). */
export function remoteImage(image: string): RemoteImage {
  const ref = parseImageRef(image);
  const [first, ...rest] = ref.repository.split('/');
  const hasRegistry =
    rest.length > 0 && (first!.includes('.') || first!.includes(':') || first === 'localhost');
  const registry = hasRegistry ? first! : 'registry-1.docker.io';
  let repository = hasRegistry ? rest.join('/') : ref.repository;
  if (!hasRegistry && !repository.includes('/')) repository = `library/${repository}`;
  return { registry, repository, reference: ref.digest ?? ref.tag ?? 'latest' };
}

export interface Manifest {
  digest: string;
  body: Record<string, unknown>;
}

export class OciClient {
  private token: string | undefined;

  constructor(private readonly image: RemoteImage) {}

  private base(): string {
    const host = this.image.registry.replace(/:\d+$/, '');
    const scheme = isLoopbackHost(host) || host === 'localhost' ? 'http' : 'https';
    return `${scheme}://${this.image.registry}/v2/${this.image.repository}`;
  }

  /** The manifest at a tag or digest; undefined when the registry has none (404). */
  async manifest(reference: string): Promise<Manifest | undefined> {
    const response = await this.get(`/manifests/${reference}`, MANIFEST_TYPES);
    if (response === undefined) return undefined;
    const digest = `sha256:${createHash('sha256').update(response).digest('hex')}`;
    if (reference.startsWith('sha256:') && reference !== digest)
      throw runtimeError(
        `${this.describe()}: the registry answered a manifest that does not match ${reference}`,
      );
    return { digest, body: JSON.parse(response.toString('utf8')) as Record<string, unknown> };
  }

  /** A blob, checked against its digest. */
  async blob(digest: string): Promise<Buffer> {
    const body = await this.get(`/blobs/${digest}`, '*/*');
    if (body === undefined) throw runtimeError(`${this.describe()}: blob ${digest} is missing`);
    if (`sha256:${createHash('sha256').update(body).digest('hex')}` !== digest)
      throw runtimeError(`${this.describe()}: blob ${digest} does not match its digest`);
    return body;
  }

  describe(): string {
    return `${this.image.registry}/${this.image.repository}`;
  }

  private async get(path: string, accept: string): Promise<Buffer | undefined> {
    const url = this.base() + path;
    let response = await this.fetch(url, accept);
    if (response.status === 401 && this.token === undefined) {
      this.token = await this.anonymousToken(response.headers.get('www-authenticate') ?? '');
      response = await this.fetch(url, accept);
    }
    if (response.status === 404) return undefined;
    if (!response.ok) throw runtimeError(`${this.describe()}: GET ${path} answered HTTP ${response.status}`);
    const body = Buffer.from(await response.arrayBuffer());
    if (body.length > MAX_BODY_BYTES) throw runtimeError(`${this.describe()}: ${path} is too large`);
    return body;
  }

  private async fetch(url: string, accept: string): Promise<Response> {
    try {
      return await fetch(url, {
        headers: { accept, ...(this.token ? { authorization: `Bearer ${this.token}` } : {}) },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      throw runtimeError(`cannot reach registry ${this.image.registry}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /** The Bearer challenge: an anonymous pull token from the realm the registry names. */
  private async anonymousToken(challenge: string): Promise<string> {
    const params = Object.fromEntries(
      [...challenge.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!] as const),
    );
    if (!/^Bearer /i.test(challenge) || !params.realm)
      throw runtimeError(`${this.describe()}: the registry needs credentials, which moat does not send yet`);
    const url = new URL(params.realm);
    if (params.service) url.searchParams.set('service', params.service);
    url.searchParams.set('scope', params.scope ?? `repository:${this.image.repository}:pull`);
    const response = await fetch(url, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }).catch(
      (err: unknown) => {
        throw runtimeError(`cannot reach ${url.host} for a registry token: ${(err as Error).message}`);
      },
    );
    const body = (await response.json().catch(() => ({}))) as { token?: string; access_token?: string };
    const token = body.token ?? body.access_token;
    if (!response.ok || !token)
      throw runtimeError(`${this.describe()}: no anonymous pull token (HTTP ${response.status})`);
    return token;
  }
}
