#!/usr/bin/env bash
# Builds kube-apiserver and etcd from the Go module proxy once per machine, for the tests that need a
# real Kubernetes API server (no prebuilt download works here). Cached by version; does nothing when
# the binaries exist.
set -euo pipefail
KUBE_VERSION=v1.34.4
ETCD_VERSION=v3.6.4
cache="${XDG_CACHE_HOME:-$HOME/.cache}/moat-test/kube/${KUBE_VERSION}-etcd-${ETCD_VERSION}"
if [[ -x "$cache/kube-apiserver" && -x "$cache/etcd" ]]; then exit 0; fi

tool=kube-tools
# shellcheck source=go-tool.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh"
export GOFLAGS="-mod=mod -p=2"
minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
staging=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
  cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api
  cri-client csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms
  kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
  mount-utils pod-security-admission sample-apiserver)

echo "kube-tools: building kube-apiserver $KUBE_VERSION (minutes, once per machine)" >&2
mkdir -p "$work/kube" "$work/out"
{
  printf 'module moatkube\n\ngo 1.24.0\n\ngodebug default=go1.24\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$KUBE_VERSION"
  for m in "${staging[@]}"; do printf '\tk8s.io/%s => k8s.io/%s v0.%s\n' "$m" "$m" "${KUBE_VERSION#v1.}"; done
  printf ')\n'
} >"$work/kube/go.mod"
printf '//go:build tools\n\npackage tools\n\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver"\n' >"$work/kube/tools.go"
v=k8s.io/component-base/version
(cd "$work/kube" && "$go_bin" mod tidy >/dev/null 2>&1 || true
  "$go_bin" build -trimpath -o "$work/out/kube-apiserver" \
    -ldflags "-s -w -X $v.gitVersion=$KUBE_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor" \
    k8s.io/kubernetes/cmd/kube-apiserver)

echo "kube-tools: building etcd $ETCD_VERSION" >&2
mkdir -p "$work/etcd"
{
  printf 'module moatetcd\n\ngo 1.24.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n\nreplace (\n' "$ETCD_VERSION"
  for m in api/v3 client/pkg/v3 client/v3 pkg/v3; do printf '\tgo.etcd.io/etcd/%s => go.etcd.io/etcd/%s %s\n' "$m" "$m" "$ETCD_VERSION"; done
  printf ')\n'
} >"$work/etcd/go.mod"
printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' >"$work/etcd/tools.go"
(cd "$work/etcd" && "$go_bin" mod tidy >/dev/null 2>&1 || true
  "$go_bin" build -trimpath -o "$work/out/etcd" -ldflags "-s -w" go.etcd.io/etcd/server/v3)

rm -rf "$cache"
mv "$work/out" "$cache"
echo "kube-tools: ready in $cache" >&2
