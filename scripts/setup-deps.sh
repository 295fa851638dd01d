#!/usr/bin/env bash
# Installs the Debian 12 packages ibfab needs to build, test and benchmark.
# Idempotent: when every package is already present it prints nothing and
# returns in well under a second (one dpkg-query call, no apt-get).
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake pkg-config clang libclang-rt-14-dev
  # libraries
  libgtest-dev libgmock-dev libbenchmark-dev libboost-graph-dev
  libyaml-cpp-dev libcli11-dev libpcap-dev
  # rdma-core headers and libraries (the ABI the drop-in libraries follow)
  libibverbs-dev librdmacm-dev libibumad-dev libibmad-dev
  # real programs the tests run against the model, and rdma-core's own
  # Python tests (python3-pyverbs); `ip` for ibfab exec's host networks
  tshark infiniband-diags opensm ibverbs-utils rdmacm-utils perftest
  python3-pyverbs iproute2
  # the OpenSM-over-ibsim anchor (bench/anchor/opensm_ibsim.py, `make anchor`)
  python3 ibsim-utils libumad2sim0
  # the Soft-RoCE VM of the passthrough tests (scripts/rxe-vm/): qemu, the
  # guest's busybox, modprobe/depmod for the kernel package's modules, and
  # the initramfs tools; the rxe provider is in ibverbs-providers
  qemu-system-x86 busybox-static kmod cpio xz-utils ibverbs-providers
  # groff and man, which read the man pages in their tests
  groff-base man-db
)

declare -A installed=()
while read -r name status; do
  [[ "$status" == installed ]] && installed[$name]=1
done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${packages[@]}" 2>/dev/null || true)
missing=()
for p in "${packages[@]}"; do
  [[ -n "${installed[$p]:-}" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "setup-deps: missing Debian packages: ${missing[*]}" >&2
  echo "setup-deps: run this script as root (or install them) and retry" >&2
  exit 1
fi

echo "setup-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer once, non-interactively.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
# apt and debconf chatter goes to a log, shown only when the install fails.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "setup-deps: apt-get failed installing ${missing[*]}" >&2
  exit 1
fi
