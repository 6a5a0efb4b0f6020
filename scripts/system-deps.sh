#!/usr/bin/env bash
# Installs the Debian packages the integration tests and the demo need: Podman with runc and
# the netavark network backend (with aardvark-dns), redis-server, openssl. Installed with
# --no-install-recommends, so everything needed is listed here. Needs root; does nothing when
# everything is already installed.
set -euo pipefail
# debootstrap, curl and python3 make the base image of the protocol-scheme build tests
# (test/support/build-images.ts); those tests also copy Go from /usr/local/go.
# netavark runs iptables for every bridged container but does not declare it. The CNI plugins
# are for test/integration/runtime/engine-setup.test.ts, which runs a second Podman on the CNI
# backend to prove isolated workloads run there too. prometheus scrapes /metrics in the
# telemetry tests. catatonit is the pause binary `podman kube play` needs (test/integration/pods/).
# chromium (with a font) is the headless browser the `moat ui` tests drive (test/integration/ui/).
# binutils (strip) makes the proxy image's Node binary without debug symbols, as the Containerfile does.
packages=(podman runc netavark aardvark-dns iptables containernetworking-plugins uidmap slirp4netns
  redis-server openssl debootstrap curl python3 prometheus catatonit chromium fonts-dejavu-core binutils)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "system-deps: missing packages ${missing[*]}; run as root or install them with apt-get" >&2
  exit 1
fi
echo "system-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
