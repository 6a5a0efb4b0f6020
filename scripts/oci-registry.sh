#!/usr/bin/env bash
# Builds the CNCF Distribution registry once per machine for the image-verification tests (a real
# OCI registry the tests start on 127.0.0.1). Compiled from the Go module proxy, cached by version;
# does nothing when the binary exists.
set -euo pipefail
REGISTRY_VERSION=v3.0.0
cache="${XDG_CACHE_HOME:-$HOME/.cache}/moat-test/registry/${REGISTRY_VERSION}"
if [[ -x "$cache/registry" ]]; then exit 0; fi
tool=oci-registry
# shellcheck source=go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh"

echo "oci-registry: building the registry $REGISTRY_VERSION (a minute or two, once per machine)" >&2
GOBIN="$work/out" GOFLAGS="-p=2" "$go_bin" install "github.com/distribution/distribution/v3/cmd/registry@${REGISTRY_VERSION}"
rm -rf "$cache"
mv "$work/out" "$cache"
echo "oci-registry: ready in $cache" >&2
