#!/usr/bin/env bash
# Builds helm from the Go module proxy once per machine, for the chart tests and
# `npm run gen:manifests` (no release download is reachable here). Cached by version; does nothing
# when the binary exists. Prints nothing on stdout; the binary is at $cache/helm.
set -euo pipefail
HELM_VERSION=v3.22.0
cache="${XDG_CACHE_HOME:-$HOME/.cache}/moat-test/helm/${HELM_VERSION}"
if [[ -x "$cache/helm" ]]; then exit 0; fi
tool=helm
# shellcheck source=go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh"

echo "helm: building helm $HELM_VERSION (a few minutes, once per machine)" >&2
GOBIN="$work/out" GOFLAGS="-p=2" "$go_bin" install -trimpath \
  -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}" \
  "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}"
rm -rf "$cache"
mv "$work/out" "$cache"
echo "helm: ready in $cache" >&2
