#!/usr/bin/env bash
# Builds ToolHive (the peer `MOAT_BENCH_PEER=toolhive npm run bench` runs beside Moat) from the Go
# module proxy once per machine: `thv-proxyrunner`, the proxy process ToolHive's Kubernetes pods
# run (a RunConfig in, the proxy with its middleware out; no container for a remote_url), and
# `thv`. Cached by version; does nothing when the binaries exist. One package at a time (-p=1):
# the bench machine may be shared, and nothing waits for this build but the bench.
set -euo pipefail
TOOLHIVE_VERSION=v0.47.0
cache="${XDG_CACHE_HOME:-$HOME/.cache}/moat-test/toolhive/${TOOLHIVE_VERSION}"
if [[ -x "$cache/thv-proxyrunner" && -x "$cache/thv" ]]; then exit 0; fi

tool=toolhive
# shellcheck source=go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh"
export GOFLAGS="-p=1" GOBIN="$work/bin"

echo "toolhive: building thv-proxyrunner and thv $TOOLHIVE_VERSION (minutes, once per machine)" >&2
"$go_bin" install -trimpath -ldflags "-s -w" \
  "github.com/stacklok/toolhive/cmd/thv-proxyrunner@${TOOLHIVE_VERSION}" \
  "github.com/stacklok/toolhive/cmd/thv@${TOOLHIVE_VERSION}"

rm -rf "$cache"
mv "$work/bin" "$cache"
echo "toolhive: ready in $cache" >&2
