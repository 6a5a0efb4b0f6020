#!/usr/bin/env bash
# Sourced by the scripts that build a test tool from the Go module proxy once per machine
# (kube-tools.sh, otel-collector.sh, helm.sh, oci-registry.sh). Before sourcing, the caller sets `cache` (the
# versioned cache folder) and `tool` (its name for messages). This finds Go, and makes a temp build
# folder `work` next to the cache, removed on exit: the caller builds there and renames into the
# cache, so an interrupted build leaves no half binary.
go_bin=$(command -v go || true)
[[ -z "$go_bin" && -x /usr/local/go/bin/go ]] && go_bin=/usr/local/go/bin/go
if [[ -z "$go_bin" ]]; then
  echo "$tool: Go is needed to build it (not on PATH nor at /usr/local/go/bin/go)" >&2
  exit 1
fi
export PATH="$(dirname "$go_bin"):$PATH"
mkdir -p "$(dirname "$cache")"
work=$(mktemp -d "$(dirname "$cache")/build.XXXXXX")
# shellcheck disable=SC2064 # expand now: work is fixed
trap "rm -rf '$work'" EXIT
export CGO_ENABLED=0 GOTOOLCHAIN=local
