/**
 * Verifies an image against the provenance its registry entry promises: cosign's signature
 * artifact for the image's manifest digest (tag `sha256-<hex>.sig` next to the image) must hold
 * at least one signature that the official sigstore-js verifier accepts under the trusted root
 * (Fulcio-style certificate chain, transparency-log inclusion promise), whose signed payload
 * names this manifest digest, and whose certificate matches every field the provenance sets.
 */
import { createHash } from 'node:crypto';
import { bundleFromJSON } from '@sigstore/bundle';
import type { TrustedRoot } from '@sigstore/protobuf-specs';
import { Verifier, toSignedEntity, toTrustMaterial, type Signer } from '@sigstore/verify';
import { errorMessage } from '../../util/errors.js';
import { OciClient, remoteImage } from './oci.js';
import type { ImageProvenance } from './provenance.js';

export type VerificationResult =
  { verified: true; digest: string } | { verified: false; unsigned: boolean; reason: string };

const ANNOTATION = {
  signature: 'dev.cosignproject.cosign/signature',
  certificate: 'dev.sigstore.cosign/certificate',
  chain: 'dev.sigstore.cosign/chain',
  rekorBundle: 'dev.sigstore.cosign/bundle',
} as const;

/** Fulcio certificate extensions (OID 1.3.6.1.4.1.57264.1.x) the provenance fields are matched against. */
const FULCIO_OID = {
  runnerEnvironment: '1.3.6.1.4.1.57264.1.11',
  sourceRepositoryUri: '1.3.6.1.4.1.57264.1.12',
  sourceRepositoryRef: '1.3.6.1.4.1.57264.1.14',
} as const;

const MAX_SIGNATURES = 16;

interface Layer {
  digest: string;
  annotations?: Record<string, string>;
}

export async function verifyImage(
  image: string,
  provenance: ImageProvenance,
  trustedRoot: TrustedRoot,
): Promise<VerificationResult> {
  const remote = remoteImage(image);
  const client = new OciClient(remote);
  const manifest = await client.manifest(remote.reference);
  if (!manifest)
    return { verified: false, unsigned: false, reason: `${image} was not found in its registry` };
  const signatures = await client.manifest(`${manifest.digest.replace(':', '-')}.sig`);
  // A registry could list thousands of signatures; a real image has a handful.
  const layers = ((signatures?.body.layers ?? []) as Layer[]).slice(0, MAX_SIGNATURES);
  if (layers.length === 0) return { verified: false, unsigned: true, reason: 'the image is not signed' };

  const trust = toTrustMaterial(trustedRoot);
  const verifier = new Verifier(trust, {
    tlogThreshold: 1,
    timestampThreshold: 1,
    // A private trust root may have no certificate-transparency log; the public one has.
    ctlogThreshold: trust.ctlogs.length > 0 ? 1 : 0,
  });
  const reasons: string[] = [];
  for (const layer of layers) {
    try {
      const payload = await client.blob(layer.digest);
      const signer = verifySignature(verifier, layer.annotations ?? {}, payload);
      const signedDigest = signedManifestDigest(payload);
      if (signedDigest !== manifest.digest)
        throw new Error(
          `the signature is for ${signedDigest ?? 'an unknown digest'}, not ${manifest.digest}`,
        );
      const mismatch = provenanceMismatch(signer, provenance);
      if (mismatch) throw new Error(`image provenance does not match: ${mismatch}`);
      return { verified: true, digest: manifest.digest };
    } catch (err) {
      reasons.push(errorMessage(err));
    }
  }
  return { verified: false, unsigned: false, reason: [...new Set(reasons)].join('; ') };
}

/** sigstore-js's checks (chain, inclusion promise, tlog body, signature); its terse errors get context. */
function verifySignature(verifier: Verifier, annotations: Record<string, string>, payload: Buffer): Signer {
  const bundle = cosignBundle(annotations, payload);
  try {
    return verifier.verify(toSignedEntity(bundle, payload));
  } catch (err) {
    const code = (err as { code?: string }).code;
    throw new Error(`the signature does not verify (${code ? `${code}: ` : ''}${errorMessage(err)})`, {
      cause: err,
    });
  }
}

function requireAnnotation(annotations: Record<string, string>, key: string): string {
  const value = annotations[key];
  if (!value) throw new Error(`the signature has no ${key} annotation`);
  return value;
}

function pemToBase64Der(pem: string): string[] {
  return [...pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)].map((m) =>
    m[1]!.replace(/\s+/g, ''),
  );
}

/** Cosign's signature-layer annotations as a Sigstore bundle (v0.1: certificate chain + inclusion promise). */
function cosignBundle(annotations: Record<string, string>, payload: Buffer) {
  const certificates = [
    ...pemToBase64Der(requireAnnotation(annotations, ANNOTATION.certificate)),
    ...pemToBase64Der(annotations[ANNOTATION.chain] ?? ''),
  ];
  const rekor = JSON.parse(requireAnnotation(annotations, ANNOTATION.rekorBundle)) as {
    SignedEntryTimestamp: string;
    Payload: { body: string; integratedTime: number; logIndex: number; logID: string };
  };
  const body = JSON.parse(Buffer.from(rekor.Payload.body, 'base64').toString('utf8')) as {
    kind: string;
    apiVersion: string;
  };
  const signature = requireAnnotation(annotations, ANNOTATION.signature);
  return bundleFromJSON({
    mediaType: 'application/vnd.dev.sigstore.bundle+json;version=0.1',
    verificationMaterial: {
      x509CertificateChain: { certificates: certificates.map((rawBytes) => ({ rawBytes })) },
      tlogEntries: [
        {
          logIndex: String(rekor.Payload.logIndex),
          logId: { keyId: Buffer.from(rekor.Payload.logID, 'hex').toString('base64') },
          kindVersion: { kind: body.kind, version: body.apiVersion },
          integratedTime: String(rekor.Payload.integratedTime),
          inclusionPromise: { signedEntryTimestamp: rekor.SignedEntryTimestamp },
          canonicalizedBody: rekor.Payload.body,
        },
      ],
      timestampVerificationData: { rfc3161Timestamps: [] },
    },
    messageSignature: {
      messageDigest: { algorithm: 'SHA2_256', digest: createHash('sha256').update(payload).digest('base64') },
      signature,
    },
  });
}

/** The manifest digest a cosign simple-signing payload vouches for. */
function signedManifestDigest(payload: Buffer): string | undefined {
  try {
    const parsed = JSON.parse(payload.toString('utf8')) as {
      critical?: { image?: { 'docker-manifest-digest'?: string } };
    };
    return parsed.critical?.image?.['docker-manifest-digest'];
  } catch {
    return undefined;
  }
}

/** A DER UTF8String / IA5String extension value as text (Fulcio v2 extensions are DER-encoded). */
function derString(value: Buffer): string {
  if (value.length >= 2 && (value[0] === 0x0c || value[0] === 0x16)) {
    const long = value[1]! & 0x80;
    const lengthBytes = long ? value[1]! & 0x7f : 0;
    return value.subarray(2 + lengthBytes).toString('utf8');
  }
  return value.toString('utf8');
}

function extension(signer: Signer, oid: string): string | undefined {
  const found = signer.identity?.oids?.find((o) => o.oid?.id.join('.') === oid);
  return found ? derString(Buffer.from(found.value)) : undefined;
}

/**
 * `signer_identity` is the workflow path ToolHive derives from the certificate's SAN
 * (`https://github.com/org/repo/.github/workflows/release.yml@refs/tags/v1` →
 * `/.github/workflows/release.yml`); the full SAN matches too.
 */
function signerIdentityMatches(san: string | undefined, expected: string, repositoryUri?: string): boolean {
  if (san === undefined) return false;
  if (san === expected) return true;
  const withoutRef = san.replace(/@[^@]*$/, '');
  return (
    withoutRef === expected ||
    (repositoryUri !== undefined &&
      withoutRef.startsWith(repositoryUri) &&
      withoutRef.slice(repositoryUri.length) === expected)
  );
}

/** The first provenance field the certificate does not match, described; undefined when all match. */
function provenanceMismatch(signer: Signer, provenance: ImageProvenance): string | undefined {
  const sourceRepository = extension(signer, FULCIO_OID.sourceRepositoryUri);
  const checks: Array<[string, string | undefined, string | undefined]> = [
    ['cert_issuer', provenance.cert_issuer, signer.identity?.extensions?.issuer],
    ['repository_uri', provenance.repository_uri, sourceRepository],
    ['repository_ref', provenance.repository_ref, extension(signer, FULCIO_OID.sourceRepositoryRef)],
    ['runner_environment', provenance.runner_environment, extension(signer, FULCIO_OID.runnerEnvironment)],
  ];
  for (const [field, expected, actual] of checks)
    if (expected && expected !== actual)
      return `${field} is ${JSON.stringify(actual ?? null)}, expected ${JSON.stringify(expected)}`;
  const san = signer.identity?.subjectAlternativeName;
  if (provenance.signer_identity && !signerIdentityMatches(san, provenance.signer_identity, sourceRepository))
    return `signer identity is ${JSON.stringify(san ?? null)}, expected ${JSON.stringify(provenance.signer_identity)}`;
  return undefined;
}
