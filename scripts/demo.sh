#!/usr/bin/env bash
# Moat's main job on a fresh machine: installs what it needs, then runs an MCP server in a
# container behind the moat proxy and manages it (run, list, call through the proxy, logs,
# stop, start, rm). Uses a private Podman API service and a private MOAT_HOME, both removed at
# the end.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bash "$here/system-deps.sh"
# shellcheck source=setup.sh
source "$here/setup.sh"
exec node --import tsx "$here/demo.ts" "$@"
