/**
 * A local Sigstore for tests (a fake only in that no real Fulcio or Rekor can run here without
 * network): a throwaway certificate authority made with openssl issues Fulcio-style signing
 * certificates (SAN identity, OIDC issuer, source repository extensions), and a local
 * transparency-log key signs inclusion promises. `trustedRoot` is the trusted_root.json that
 * trusts exactly these two, and `signImage` pushes a cosign-layout signature
 * (`sha256-<hex>.sig`: simple-signing payload layer + certificate, signature and Rekor bundle
 * annotations) to an OCI registry, as `cosign sign` does.
 */
import { execFileSync } from 'node:child_process';
import { createHash, createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ImageProvenance } from '../../src/runtime/verify/provenance.js';
import { OciRegistry } from './oci-registry.js';

export interface SignerIdentity {
  /** Certificate SAN (URI), e.g. the workflow URL with `@ref`. */
  san: string;
  issuer: string;
  repositoryUri: string;
  repositoryRef: string;
  runnerEnvironment: string;
}

export const GITHUB_IDENTITY: SignerIdentity = {
  san: 'https://github.com/acme/weather-mcp/.github/workflows/release.yml@refs/tags/v1.0.0',
  issuer: 'https://token.actions.githubusercontent.com',
  repositoryUri: 'https://github.com/acme/weather-mcp',
  repositoryRef: 'refs/tags/v1.0.0',
  runnerEnvironment: 'github-hosted',
};

/** The provenance a registry entry gives an image signed as GITHUB_IDENTITY: every field set. */
export const GITHUB_PROVENANCE: ImageProvenance = {
  sigstore_url: 'tuf-repo-cdn.sigstore.dev',
  repository_uri: GITHUB_IDENTITY.repositoryUri,
  repository_ref: GITHUB_IDENTITY.repositoryRef,
  signer_identity: '/.github/workflows/release.yml',
  runner_environment: GITHUB_IDENTITY.runnerEnvironment,
  cert_issuer: GITHUB_IDENTITY.issuer,
};

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function pemToDer(pem: string): Buffer {
  return Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
}

/** Canonical JSON (sorted keys), as Rekor signs its inclusion promises. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
}

export class LocalSigstore {
  private readonly dir = mkdtempSync(join(tmpdir(), 'moat-sigstore-'));
  private readonly caPem: string;
  private readonly caKey: string;
  private readonly rekorKey: KeyObject;
  private readonly rekorSpki: Buffer;
  private logIndex = 0;

  constructor() {
    openssl(['ecparam', '-genkey', '-name', 'prime256v1', '-noout', '-out', 'ca.key'], this.dir);
    openssl(
      [
        'req',
        '-x509',
        '-new',
        '-key',
        'ca.key',
        '-subj',
        '/O=moat-test/CN=moat-test-fulcio',
        '-days',
        '2',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
        '-out',
        'ca.pem',
      ],
      this.dir,
    );
    this.caPem = readFileSync(join(this.dir, 'ca.pem'), 'utf8');
    this.caKey = join(this.dir, 'ca.key');
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    this.rekorKey = privateKey;
    this.rekorSpki = publicKey.export({ type: 'spki', format: 'der' });
  }

  /** trusted_root.json trusting this CA and this log (no CT log, no timestamp authority). */
  trustedRoot(): object {
    const start = new Date(Date.now() - 3600_000).toISOString();
    return {
      mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
      tlogs: [
        {
          baseUrl: 'https://rekor.moat-test.invalid',
          hashAlgorithm: 'SHA2_256',
          publicKey: {
            rawBytes: this.rekorSpki.toString('base64'),
            keyDetails: 'PKIX_ECDSA_P256_SHA_256',
            validFor: { start },
          },
          logId: { keyId: createHash('sha256').update(this.rekorSpki).digest('base64') },
        },
      ],
      certificateAuthorities: [
        {
          subject: { organization: 'moat-test', commonName: 'moat-test-fulcio' },
          uri: 'https://fulcio.moat-test.invalid',
          certChain: { certificates: [{ rawBytes: pemToDer(this.caPem).toString('base64') }] },
          validFor: { start },
        },
      ],
      ctlogs: [],
      timestampAuthorities: [],
    };
  }

  /** A short-lived signing certificate and its key for an identity (what Fulcio would issue). */
  issue(identity: SignerIdentity): { certPem: string; key: KeyObject } {
    const n = ++this.logIndex;
    openssl(['ecparam', '-genkey', '-name', 'prime256v1', '-noout', '-out', `leaf${n}.key`], this.dir);
    openssl(
      ['req', '-new', '-key', `leaf${n}.key`, '-subj', '/O=sigstore.dev', '-out', `leaf${n}.csr`],
      this.dir,
    );
    writeFileSync(
      join(this.dir, `leaf${n}.cnf`),
      [
        '[v3]',
        'keyUsage=critical,digitalSignature',
        'extendedKeyUsage=codeSigning',
        `subjectAltName=critical,URI:${identity.san}`,
        `1.3.6.1.4.1.57264.1.8=ASN1:UTF8String:${identity.issuer}`,
        `1.3.6.1.4.1.57264.1.11=ASN1:UTF8String:${identity.runnerEnvironment}`,
        `1.3.6.1.4.1.57264.1.12=ASN1:UTF8String:${identity.repositoryUri}`,
        `1.3.6.1.4.1.57264.1.14=ASN1:UTF8String:${identity.repositoryRef}`,
        '',
      ].join('\n'),
    );
    openssl(
      [
        'x509',
        '-req',
        '-in',
        `leaf${n}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        this.caKey,
        '-CAcreateserial',
        '-days',
        '1',
        '-extfile',
        `leaf${n}.cnf`,
        '-extensions',
        'v3',
        '-out',
        `leaf${n}.pem`,
      ],
      this.dir,
    );
    return {
      certPem: readFileSync(join(this.dir, `leaf${n}.pem`), 'utf8'),
      key: createPrivateKey(readFileSync(join(this.dir, `leaf${n}.key`))),
    };
  }

  /** Cosign's layer annotations for a signed payload: signature, certificate, chain, Rekor bundle. */
  signPayload(payload: Buffer, identity: SignerIdentity): Record<string, string> {
    const { certPem, key } = this.issue(identity);
    const signature = sign('sha256', payload, key).toString('base64');
    const body = Buffer.from(
      canonical({
        apiVersion: '0.0.1',
        kind: 'hashedrekord',
        spec: {
          data: { hash: { algorithm: 'sha256', value: createHash('sha256').update(payload).digest('hex') } },
          signature: { content: signature, publicKey: { content: Buffer.from(certPem).toString('base64') } },
        },
      }),
    ).toString('base64');
    const entry = {
      body,
      integratedTime: Math.floor(Date.now() / 1000),
      logIndex: this.logIndex,
      logID: createHash('sha256').update(this.rekorSpki).digest('hex'),
    };
    const set = sign('sha256', Buffer.from(canonical(entry)), this.rekorKey).toString('base64');
    return {
      'dev.cosignproject.cosign/signature': signature,
      'dev.sigstore.cosign/certificate': certPem,
      'dev.sigstore.cosign/chain': this.caPem,
      'dev.sigstore.cosign/bundle': JSON.stringify({ SignedEntryTimestamp: set, Payload: entry }),
    };
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Cosign's simple-signing payload for an image digest. */
export function simpleSigningPayload(repository: string, digest: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      critical: {
        identity: { 'docker-reference': repository },
        image: { 'docker-manifest-digest': digest },
        type: 'cosign container image signature',
      },
      optional: null,
    }),
  );
}

/**
 * A tampered signature: made for `repository`'s digest, then its payload altered to name another
 * repository (`evil/other` on the same host) with the old signature kept.
 */
export function tamperedSignature(
  by: LocalSigstore,
  repository: string,
  digest: string,
): { payload: Buffer; annotations: Record<string, string> } {
  const annotations = by.signPayload(simpleSigningPayload(repository, digest), GITHUB_IDENTITY);
  const host = repository.split('/')[0] ?? repository;
  return { payload: simpleSigningPayload(`${host}/evil/other`, digest), annotations };
}

/**
 * What the signing tests share: a loopback OCI registry, a local Sigstore, and a work directory
 * holding its trusted_root.json (`trustEnv` points Moat at it).
 */
export class SigningFixture {
  private constructor(
    readonly work: string,
    readonly registry: OciRegistry,
    readonly sigstore: LocalSigstore,
    readonly trustEnv: NodeJS.ProcessEnv,
  ) {}

  static async start(prefix: string): Promise<SigningFixture> {
    const work = mkdtempSync(join(tmpdir(), prefix));
    const sigstore = new LocalSigstore();
    const rootFile = join(work, 'trusted_root.json');
    writeFileSync(rootFile, JSON.stringify(sigstore.trustedRoot()));
    return new SigningFixture(work, await OciRegistry.start(), sigstore, {
      MOAT_SIGSTORE_TRUSTED_ROOT: rootFile,
    });
  }

  /** Signs `<registry>/<repository>` at `digest` as `identity` and pushes the signature. */
  async sign(
    repository: string,
    digest: string,
    identity = GITHUB_IDENTITY,
    by: LocalSigstore = this.sigstore,
  ): Promise<void> {
    const payload = simpleSigningPayload(`${this.registry.host}/${repository}`, digest);
    await this.registry.pushSignatures(repository, digest, [
      { payload, annotations: by.signPayload(payload, identity) },
    ]);
  }

  async stop(): Promise<void> {
    await this.registry.stop();
    this.sigstore.cleanup();
    rmSync(this.work, { recursive: true, force: true });
  }
}
