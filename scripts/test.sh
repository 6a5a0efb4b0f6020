#!/usr/bin/env bash
# One command for a fresh machine: installs what the tests need, then runs typecheck, lint,
# build and every test (unit, integration against real Podman/Redis/OIDC, conformance).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bash "$here/system-deps.sh"
# shellcheck source=setup.sh
source "$here/setup.sh"
bash "$here/kube-tools.sh"
npm run check
