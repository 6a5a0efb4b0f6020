#!/usr/bin/env bash
# Builds the CNCF Distribution registry once per machine for the image-verification tests (a real
# OCI registry the tests start on 127.0.0.1). Compiled from the Go module proxy, cached by version;
# does nothing when the binary exists. Builds in a temp dir and renames, so an interrupted build
# leaves no half binary.
set -euo pipefail
REGISTRY_VERSION=v3.0.0
cache="${XDG_CACHE_HOME:-$HOME/.cache}/moat-test/registry/${REGISTRY_VERSION}"
if [[ -x "$cache/registry" ]]; then exit 0; fi

go_bin=$(command -v go || true)
[[ -z "$go_bin" && -x /usr/local/go/bin/go ]] && go_bin=/usr/local/go/bin/go
if [[ -z "$go_bin" ]]; then
  echo "oci-registry: Go is needed to build the registry (not on PATH nor at /usr/local/go/bin/go)" >&2
  exit 1
fi

mkdir -p "$(dirname "$cache")"
work=$(mktemp -d "$(dirname "$cache")/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
export CGO_ENABLED=0 GOFLAGS="-p=2" GOTOOLCHAIN=local GOBIN="$work/bin"

echo "oci-registry: building the registry $REGISTRY_VERSION (a minute or two, once per machine)" >&2
"$go_bin" install "github.com/distribution/distribution/v3/cmd/registry@${REGISTRY_VERSION}"

rm -rf "$cache"
mkdir -p "$cache"
mv "$work/bin/registry" "$cache/registry"
echo "oci-registry: ready in $cache" >&2
