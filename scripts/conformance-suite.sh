#!/usr/bin/env bash
# Installs the older official MCP conformance suite (@modelcontextprotocol/conformance 0.1.16,
# `--suite all`) once per machine, from the npm registry, for the dual-era conformance test (the
# newer 0.2.0-alpha is a devDependency). Cached by version; does nothing when it is installed.
set -euo pipefail
CONFORMANCE_VERSION=0.1.16
cache="${XDG_CACHE_HOME:-$HOME/.cache}/moat-test/conformance/${CONFORMANCE_VERSION}"
if [[ -f "$cache/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]]; then exit 0; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "conformance-suite: installing @modelcontextprotocol/conformance@${CONFORMANCE_VERSION} (once per machine)" >&2
npm install --prefix "$work" --no-audit --no-fund --silent "@modelcontextprotocol/conformance@${CONFORMANCE_VERSION}" >&2
rm -rf "$cache"
mkdir -p "$(dirname "$cache")"
mv "$work" "$cache"
trap - EXIT
echo "conformance-suite: ready in $cache" >&2
