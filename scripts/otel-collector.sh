#!/usr/bin/env bash
# Builds an OpenTelemetry Collector once per machine for the telemetry tests: the collector builder
# (from the Go module proxy) compiles a collector with only the core OTLP receiver and the debug
# exporter (contrib modules are not needed, and several are refused by the proxy). Cached by
# version; does nothing when the binary exists. Builds in a temp dir and renames, so an interrupted
# build leaves no half binary.
set -euo pipefail
OTELCOL_VERSION=v0.165.0
cache="${XDG_CACHE_HOME:-$HOME/.cache}/moat-test/otelcol/${OTELCOL_VERSION}"
if [[ -x "$cache/otelcol" ]]; then exit 0; fi

tool=otel-collector
# shellcheck source=go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh"
export GOFLAGS="-p=2" GOBIN="$work/bin"

echo "otel-collector: building the collector $OTELCOL_VERSION (minutes, once per machine)" >&2
"$go_bin" install "go.opentelemetry.io/collector/cmd/builder@${OTELCOL_VERSION}"
cat >"$work/manifest.yaml" <<MANIFEST
dist:
  name: otelcol
  description: Moat test collector (OTLP in, debug out)
  output_path: $work/out
receivers:
  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver ${OTELCOL_VERSION}
exporters:
  - gomod: go.opentelemetry.io/collector/exporter/debugexporter ${OTELCOL_VERSION}
MANIFEST
"$work/bin/builder" --config "$work/manifest.yaml" >&2

rm -rf "$cache"
mkdir -p "$cache"
mv "$work/out/otelcol" "$cache/otelcol"
echo "otel-collector: ready in $cache" >&2
