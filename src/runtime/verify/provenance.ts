/**
 * What a registry entry promises about an image's origin (ToolHive's `provenance` object, same
 * field names). Every field that is set must match the signing certificate; unset fields are not
 * checked. The registry fills this; `moat run` passes it to image verification.
 */
export interface ImageProvenance {
  /** The Sigstore instance whose trust root applies (ToolHive: its TUF host); informational here. */
  sigstore_url?: string;
  /** Source repository the image was built from (certificate extension SourceRepositoryURI). */
  repository_uri?: string;
  /** Git ref it was built from (SourceRepositoryRef), e.g. `refs/tags/v1.0.0`. */
  repository_ref?: string;
  /** Workflow identity: the certificate's SAN, or its path within repository_uri without `@ref`. */
  signer_identity?: string;
  /** Build runner (RunnerEnvironment), e.g. `github-hosted`. */
  runner_environment?: string;
  /** OIDC issuer of the signing identity, e.g. `https://token.actions.githubusercontent.com`. */
  cert_issuer?: string;
}

/** True when the provenance sets at least one field to check. */
export function hasProvenance(provenance: ImageProvenance | undefined): provenance is ImageProvenance {
  return (
    provenance !== undefined &&
    Object.entries(provenance).some(([key, value]) => key !== 'sigstore_url' && Boolean(value))
  );
}
