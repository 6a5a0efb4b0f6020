/**
 * A real OCI registry for the image-verification tests: the CNCF Distribution registry that
 * scripts/oci-registry.sh builds once per machine, started on a free 127.0.0.1 port with its
 * storage in a temp dir and stopped by PID. Plain HTTP (loopback only). Blobs and manifests are
 * pushed with the distribution API itself, images with `podman push --tls-verify=false`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { podmanCli } from './podman.js';
import { freePort } from './ports.js';

export const REGISTRY_VERSION = 'v3.0.0';
const START_TIMEOUT_MS = 15_000;

export function registryBinary(): string {
  const cache = process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
  const bin = join(cache, 'moat-test', 'registry', REGISTRY_VERSION, 'registry');
  if (!existsSync(bin))
    throw new Error(`the OCI registry is missing at ${bin}; build it with scripts/oci-registry.sh`);
  return bin;
}

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

export class OciRegistry {
  private constructor(
    /** `127.0.0.1:<port>`: the registry part of image references. */
    readonly host: string,
    private readonly child: ChildProcess,
    private readonly dir: string,
  ) {}

  static async start(): Promise<OciRegistry> {
    const bin = registryBinary();
    const dir = mkdtempSync(join(tmpdir(), 'moat-registry-'));
    const port = await freePort();
    const config = join(dir, 'config.yml');
    writeFileSync(
      config,
      [
        'version: 0.1',
        'log: { level: warn }',
        `storage: { filesystem: { rootdirectory: ${join(dir, 'data')} }, delete: { enabled: true } }`,
        `http: { addr: "127.0.0.1:${port}" }`,
        '',
      ].join('\n'),
    );
    const child = spawn(bin, ['serve', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += String(d)));
    const registry = new OciRegistry(`127.0.0.1:${port}`, child, dir);
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      const ok = await fetch(`http://${registry.host}/v2/`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return registry;
      if (child.exitCode !== null || Date.now() > deadline) {
        await registry.stop();
        throw new Error(`the OCI registry did not start on ${registry.host}: ${stderr.trim()}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Pushes a local Podman image to `<host>/<repository>:<tag>`; returns the pushed reference. */
  async pushImage(localImage: string, repository: string, tag: string): Promise<string> {
    const ref = `${this.host}/${repository}:${tag}`;
    await podmanCli(['push', '--tls-verify=false', '--format', 'oci', localImage, ref]);
    return ref;
  }

  async pushBlob(repository: string, content: Buffer): Promise<string> {
    const digest = `sha256:${createHash('sha256').update(content).digest('hex')}`;
    const start = await fetch(`http://${this.host}/v2/${repository}/blobs/uploads/`, { method: 'POST' });
    if (start.status !== 202) throw new Error(`blob upload start answered ${start.status}`);
    const location = new URL(start.headers.get('location')!, `http://${this.host}`);
    location.searchParams.set('digest', digest);
    const put = await fetch(location, {
      method: 'PUT',
      body: content,
      headers: { 'content-type': 'application/octet-stream' },
    });
    if (put.status !== 201) throw new Error(`blob upload answered ${put.status}: ${await put.text()}`);
    return digest;
  }

  async pushManifest(repository: string, reference: string, manifest: object): Promise<string> {
    const body = Buffer.from(JSON.stringify(manifest));
    const response = await fetch(`http://${this.host}/v2/${repository}/manifests/${reference}`, {
      method: 'PUT',
      body,
      headers: { 'content-type': 'application/vnd.oci.image.manifest.v1+json' },
    });
    if (response.status !== 201)
      throw new Error(`manifest push answered ${response.status}: ${await response.text()}`);
    return `sha256:${createHash('sha256').update(body).digest('hex')}`;
  }

  /** The digest a tag points at (the manifest digest signatures are made for). */
  async digestOf(repository: string, tag: string): Promise<string> {
    const response = await fetch(`http://${this.host}/v2/${repository}/manifests/${tag}`, {
      method: 'HEAD',
      headers: {
        accept: 'application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json',
      },
    });
    const digest = response.headers.get('docker-content-digest');
    if (!response.ok || !digest) throw new Error(`no digest for ${repository}:${tag} (${response.status})`);
    return digest;
  }

  /**
   * Pushes a cosign-layout signature artifact for `digest`: tag `sha256-<hex>.sig`, one
   * simple-signing layer per signature with its annotations.
   */
  async pushSignatures(
    repository: string,
    digest: string,
    layers: ReadonlyArray<{ payload: Buffer; annotations: Record<string, string> }>,
  ): Promise<void> {
    const config = Buffer.from('{}');
    const configDigest = await this.pushBlob(repository, config);
    const descriptors: Descriptor[] = [];
    for (const layer of layers)
      descriptors.push({
        mediaType: 'application/vnd.dev.cosign.simplesigning.v1+json',
        digest: await this.pushBlob(repository, layer.payload),
        size: layer.payload.length,
        annotations: layer.annotations,
      });
    await this.pushManifest(repository, `${digest.replace(':', '-')}.sig`, {
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: {
        mediaType: 'application/vnd.oci.image.config.v1+json',
        digest: configDigest,
        size: config.length,
      },
      layers: descriptors,
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.pid !== undefined) {
      const exited = new Promise((r) => this.child.once('exit', r));
      process.kill(this.child.pid, 'SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
