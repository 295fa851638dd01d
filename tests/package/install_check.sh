#!/usr/bin/env bash
# The Debian package as a user gets it: built by CPack from BUILD, checked
# (its dependencies, nothing over the system's rdma-core), installed with
# `apt-get install ./ibfab_*.deb` into a clean root, and used there with
# nothing of the build tree in sight: the man pages and pkg-config file
# are found, `ibfab launch` runs a multi-host perftest, and the example
# project (examples/rdma-echo) builds against the installed package with
# find_package(ibfab) and passes its tests. Then `dpkg --purge` removes
# every file it installed.
#
# The clean root is an overlay of this machine's root (its Debian
# packages, none of ibfab) in a private mount namespace, with the source
# and build trees hidden under empty directories; nothing of it outlives
# the test. Needs root and overlayfs.
#
# usage: install_check.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(realpath "$1")
source=$(realpath "$2")
fail() { echo "install_check: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || fail "needs root (a chroot, mounts, apt-get)"

work=$(mktemp -d "$build/package-check.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The package.
cpack -G DEB -B "$work/deb" --config "$build/CPackConfig.cmake" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; fail "cpack failed"; }
deb=$(ls "$work"/deb/ibfab_*.deb)
echo "package: $(basename "$deb") (${SECONDS}s)"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
names=$(tr ',' '\n' <<<"$depends" | awk '{print $1}')
for d in libc6 libstdc++6 libyaml-cpp0.7 iproute2; do
  grep -qxF "$d" <<<"$names" || fail "Depends lacks $d"
done
# The drop-in libraries only in their private directory.
if dpkg-deb -c "$deb" | awk '{print $6}' | grep -E '/lib(ibverbs|rdmacm|ibumad)\.so' | grep -v '^\./usr/lib/ibfab/'; then
  fail "a drop-in library outside /usr/lib/ibfab (over the system's rdma-core)"
fi

# The clean root.
mkdir -p "$work"/{upper,overlay-work,root}
cp "$deb" "$work/upper/"  # at the clean root's /
mkdir -p "$work/upper/opt"
cp -r "$source/examples/rdma-echo" "$work/upper/opt/rdma-echo"
cat >"$work/upper/opt/inside.sh" <<'INSIDE'
#!/usr/bin/env bash
# What a user does on a Debian 12 machine with the package.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
echo "== apt-get install ./ibfab_*.deb"
cd / && apt-get install -y -q --no-install-recommends ./ibfab_*.deb >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; exit 1; }
dpkg -s ibfab | grep -q "^Status: install ok installed" || { echo "ibfab is not installed"; exit 1; }
[[ $(command -v ibfab) == /usr/bin/ibfab ]] || { echo "ibfab is not /usr/bin/ibfab"; exit 1; }
echo "== man and pkg-config"
man -w ibfab-launch | grep -q "/usr/share/man/man1/ibfab-launch.1" || { echo "no ibfab-launch(1)"; exit 1; }
[[ $(realpath "$(pkg-config --variable=ibfab ibfab)") == /usr/bin/ibfab ]] || { echo "pkg-config: wrong ibfab"; exit 1; }
[[ -e "$(pkg-config --variable=dropin_libdir ibfab)/libibverbs.so.1" ]] || { echo "pkg-config: wrong dropin_libdir"; exit 1; }
echo "== ibfab launch: perftest between two hosts"
ibfab launch --topology fat-tree:2:4 --timeout 60 -- \
  H1 --ready-port 18515 ib_send_bw -d ibfab0 : H2 ib_send_bw -d ibfab0 '{H1}' >/tmp/launch.log 2>&1 ||
  { cat /tmp/launch.log; echo "ibfab launch failed"; exit 1; }
grep -E '^\[H2\] +65536 +1000 ' /tmp/launch.log || { cat /tmp/launch.log; echo "no bandwidth line"; exit 1; }
echo "== the example project against the installed package"
cmake -S /opt/rdma-echo -B /opt/rdma-echo-build >/tmp/cmake.log 2>&1 || { cat /tmp/cmake.log; exit 1; }
grep -q "ibfab_DIR:PATH=/usr/lib/cmake/ibfab" /opt/rdma-echo-build/CMakeCache.txt ||
  { echo "find_package(ibfab) did not find the installed package"; exit 1; }
cmake --build /opt/rdma-echo-build >/tmp/build.log 2>&1 || { cat /tmp/build.log; exit 1; }
(cd /opt/rdma-echo-build && ctest --output-on-failure)
echo "== dpkg --purge ibfab"
dpkg --purge ibfab >/tmp/purge.log 2>&1 || { cat /tmp/purge.log; exit 1; }
for f in /usr/bin/ibfab /usr/lib/ibfab /usr/lib/cmake/ibfab /usr/share/man/man1/ibfab.1; do
  [[ ! -e $f ]] || { echo "$f is left after dpkg --purge"; exit 1; }
done
echo "== passed"
INSIDE
chmod +x "$work/upper/opt/inside.sh"

unshare --mount --propagation private bash -euo pipefail -c '
  work=$1 source=$2 build=$3
  root=$work/root
  mount -t overlay overlay -o "lowerdir=/,upperdir=$work/upper,workdir=$work/overlay-work" "$root" ||
    { echo "install_check: cannot mount an overlay of / (overlayfs)" >&2; exit 1; }
  mount --rbind /proc "$root/proc"
  mount --rbind /sys "$root/sys"
  mount --rbind /dev "$root/dev"
  mount -t tmpfs tmpfs "$root/tmp"
  mount -t tmpfs tmpfs "$root/run"
  for hidden in "$source" "$build"; do
    [[ -d $root$hidden ]] && mount -t tmpfs tmpfs "$root$hidden"
  done
  exec chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb /opt/inside.sh
' install_check "$work" "$source" "$build"
