#!/usr/bin/env bash
# One command for a fresh machine: installs what the tests need, then runs typecheck, lint,
# build and every test (unit, integration against real Podman/Redis/OIDC, an OpenTelemetry
# Collector and Prometheus, the Helm chart, conformance, the AI clients that check `moat client`).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bash "$here/system-deps.sh"
# shellcheck source=setup.sh
source "$here/setup.sh"
bash "$here/kube-tools.sh"
bash "$here/otel-collector.sh"
bash "$here/helm.sh"
bash "$here/oci-registry.sh"
bash "$here/client-clis.sh"
bash "$here/conformance-suite.sh"
npm run check
