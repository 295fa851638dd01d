#!/usr/bin/env bash
# Builds the Soft-RoCE VM's kernel and initramfs into a cache directory
# (docs/ARCHITECTURE.md, "The Soft-RoCE VM").
set -euo pipefail

usage() {
  cat <<'EOF'
usage: scripts/rxe-vm/build.sh [--cache DIR] [--kernel-package NAME] [--file SRC[:DEST]]...

Makes what scripts/rxe-vm/run.sh boots, in DIR (default: build/rxe-vm under
the source tree), and prints it, one "kernel=PATH" line and "initrd=PATH"
lines (the archives to concatenate, in order):
  kernel       the stock Debian kernel of NAME (default: the one
               linux-image-amd64 depends on), fetched with `apt-get download`
               into DIR/debs and unpacked with dpkg -x, never installed; the
               uncompressed vmlinux is booted through its PVH entry point
  base         busybox-static, the rdma-core tools (ibv_devinfo, the
               ibv_*_pingpong, rping, mckey, ucmatose, udaddy, rdma, ip) with
               the system's libibverbs, librdmacm and rxe provider, and the
               modules crc32_generic, rdma_rxe, ib_uverbs, rdma_ucm, ib_umad,
               veth, virtio_pci, virtio_net with their dependencies
  extras       the files given with --file (if any)

--file SRC[:DEST]  copies the host file or directory SRC to DEST in the guest
                   (default: the same absolute path). An ELF file brings the
                   libraries ldd finds for it, at their host paths, except
                   ibfab's drop-in libibverbs, librdmacm, libibumad and
                   libibmad: rdma-core's of the same name go in their place
                   (and --file refuses them).

Each part is rebuilt only when its inputs changed (the package, the host
files, these scripts); a second run with the same inputs prints the same
paths and builds nothing. Exit status 2, with one line, on any failure.
EOF
}

here=$(cd "$(dirname "$0")" && pwd)
cache=$here/../../build/rxe-vm
kpkg=
files=()
while (($#)); do
  case $1 in
    --cache) cache=$2; shift 2 ;;
    --kernel-package) kpkg=$2; shift 2 ;;
    --file) files+=("$2"); shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "rxe-vm build: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
die() { echo "rxe-vm build: $*" >&2; exit 2; }
mkdir -p "$cache" || die "cannot create the cache directory $cache"
cache=$(cd "$cache" && pwd)
for tool in apt-get dpkg depmod modprobe cpio gzip xz ldd; do
  command -v "$tool" >/dev/null || die "$tool is missing (scripts/setup-deps.sh installs it)"
done
[[ -x /bin/busybox ]] || die "/bin/busybox is missing (package busybox-static; scripts/setup-deps.sh)"

# One build at a time per cache directory (run.sh may be started by several
# tests at once); readers get whole files, each output is renamed into place.
exec 9>"$cache/.lock"
flock 9
tmp=$(mktemp -d "$cache/.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# ---- the kernel package ----------------------------------------------------
kernel_package() {
  apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'
}
if [[ -z $kpkg ]]; then
  kpkg=$(kernel_package)
  # A machine whose packages were all there may never have fetched the lists.
  [[ -z $kpkg && $(id -u) == 0 ]] && apt-get update -qq >"$tmp/apt.log" 2>&1 && kpkg=$(kernel_package)
  [[ -n $kpkg ]] || die "apt-cache knows no linux-image-amd64 (run apt-get update as root)"
fi
mkdir -p "$cache/debs"
deb=$(ls "$cache/debs/${kpkg}_"*.deb 2>/dev/null | head -1 || true)
if [[ -z $deb ]]; then
  (cd "$tmp" && apt-get download "$kpkg" >"$tmp/apt.log" 2>&1) ||
    die "apt-get download $kpkg failed: $(grep -m1 -E '^(E|Err):' "$tmp/apt.log" || tail -1 "$tmp/apt.log")"
  mv "$tmp/${kpkg}_"*.deb "$cache/debs/"
  deb=$(ls "$cache/debs/${kpkg}_"*.deb | head -1)
fi

# ---- the kernel image and the modules (keyed by the package) ---------------
# crc32_generic is a soft dependency of rdma_rxe that --show-depends does not
# list: rxe asks the crypto API for "crc32" (its ICRC) and fails to create a
# device without it.
modules=(crc32_generic rdma_rxe ib_uverbs rdma_ucm ib_umad veth virtio_pci virtio_net)
kdir=$cache/kernel
kkey="$(basename "$deb") ${modules[*]}"
if [[ "$(cat "$kdir/key" 2>/dev/null)" != "$kkey" ]]; then
  root=$tmp/kroot
  dpkg -x "$deb" "$root" || die "dpkg -x $deb failed"
  kv=$(ls "$root/lib/modules" | head -1)
  depmod -b "$root" "$kv" || die "depmod failed on $deb"
  new=$tmp/kernel
  mkdir -p "$new/modules"
  # The bzImage holds the kernel as one xz stream; the ELF inside boots
  # through its PVH entry point (CONFIG_PVH), skipping the decompressor,
  # seconds of a TCG boot.
  vmlinuz=$root/boot/vmlinuz-$kv
  off=$(LC_ALL=C grep -obUaP -m1 '\xfd7zXZ\x00' "$vmlinuz" | head -1 | cut -d: -f1 || true)
  [[ -n $off ]] && { tail -c +$((off + 1)) "$vmlinuz" | xz -dc --single-stream >"$new/vmlinux" 2>/dev/null || true; }
  if [[ "$(head -c4 "$new/vmlinux" 2>/dev/null)" == $'\x7fELF' ]]; then
    mv "$new/vmlinux" "$new/image"
  else
    cp "$vmlinuz" "$new/image"
  fi
  # modules.list: one "FILE ARGS" line per module, in load order.
  : >"$new/modules.list"
  for m in "${modules[@]}"; do
    modprobe -d "$root" -S "$kv" --show-depends "$m" 2>"$tmp/modprobe.err" >"$tmp/deps" ||
      die "module $m is not in $deb: $(head -1 "$tmp/modprobe.err")"
    while read -r verb path args; do
      [[ $verb == insmod ]] || continue
      name=$(basename "$path")
      grep -q "^$name\b" "$new/modules.list" && continue
      cp "$path" "$new/modules/$name"
      echo "$name $args" >>"$new/modules.list"
    done <"$tmp/deps"
  done
  echo "$kkey" >"$new/key"
  rm -rf "$root" "$kdir"
  mv "$new" "$kdir"
fi

# ---- copying host files with their libraries --------------------------------
# put ROOT SRC DEST: SRC (file or directory, links followed) to DEST in ROOT.
# ELF files are listed in $tmp/elves for their libraries.
dropin_name='^lib(ibverbs|rdmacm|ibumad|ibmad)\.so'
is_elf() { [[ -f $1 && "$(head -c4 "$1")" == $'\x7fELF' ]]; }
put() {
  local root=$1 src=$2 dest=$3
  [[ -e $src ]] || die "no such file: $src"
  if [[ -d $src ]]; then
    mkdir -p "$root$dest"
    cp -rL "$src/." "$root$dest/"
    find -L "$src" -type f | while read -r f; do is_elf "$f" && echo "$f"; done >>"$tmp/elves"
    return 0
  fi
  mkdir -p "$root$(dirname "$dest")"
  cp -L "$src" "$root$dest"
  if is_elf "$src"; then echo "$src" >>"$tmp/elves"; fi
}
# put_libraries ROOT: the libraries of every ELF listed in $tmp/elves.
put_libraries() {
  local root=$1 elf lib
  [[ -s $tmp/elves ]] || return 0
  while read -r elf; do
    env -u LD_LIBRARY_PATH -u LD_PRELOAD ldd "$elf" 2>/dev/null | grep -q 'not a dynamic' && continue
    if env -u LD_LIBRARY_PATH -u LD_PRELOAD ldd "$elf" | grep -q 'not found'; then
      die "$elf: ldd finds no $(env -u LD_LIBRARY_PATH ldd "$elf" | awk '/not found/ {print $1; exit}')"
    fi
    env -u LD_LIBRARY_PATH -u LD_PRELOAD ldd "$elf" |
      awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'
  done <"$tmp/elves" | sort -u | while read -r lib; do
    # In place of ibfab's drop-in library, rdma-core's of the same name.
    if [[ $lib != /lib/* && $lib != /usr/lib/* && $lib != /lib64/* && $(basename "$lib") =~ $dropin_name ]]; then
      lib=/usr/lib/x86_64-linux-gnu/$(basename "$lib")
      [[ -e $lib ]] || die "the system has no $lib for $elf (scripts/setup-deps.sh installs rdma-core's libraries)"
    fi
    mkdir -p "$root$(dirname "$lib")"
    [[ -e $root$lib ]] || cp -L "$lib" "$root$lib"
  done
}
# archive ROOT OUT: ROOT as a gzipped newc cpio, renamed into place.
archive() {
  (cd "$1" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0 | gzip -1) >"$2.new"
  mv "$2.new" "$2"
}
# key FILES...: one hash of these files' contents and names.
key() { { printf '%s\n' "$@"; cat "$@"; } | sha256sum | cut -c1-16; }
new_root() {  # merged-/usr layout, as on the host
  local r=$1
  mkdir -p "$r"/usr/{bin,sbin,lib,lib64} "$r"/{etc,proc,sys,dev,tmp,run,root}
  for d in bin sbin lib lib64; do ln -s usr/$d "$r/$d"; done
}

# ---- base: busybox, rdma-core, the modules, /init -----------------------------
tools=(ibv_devices ibv_devinfo ibv_rc_pingpong ibv_ud_pingpong ibv_srq_pingpong
       rping mckey ucmatose udaddy rdma ip)
paths=()
for t in "${tools[@]}"; do
  p=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin command -v "$t") || die "$t is missing (scripts/setup-deps.sh installs it)"
  paths+=("$p")
done
provider=/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so
driver=/etc/libibverbs.d/rxe.driver
# glibc loads libgcc_s at run time (thread exit and cancellation: rping
# aborts without it); ldd does not list it.
libgcc=$(readlink -f /lib/x86_64-linux-gnu/libgcc_s.so.1)
base_inputs=("$here/build.sh" "$here/init" "$kdir/key" /bin/busybox "$provider" "$driver" "$libgcc" "${paths[@]}")
for f in "${base_inputs[@]}"; do [[ -e $f ]] || die "$f is missing (package ibverbs-providers or libgcc-s1)"; done
base_key=$(key "${base_inputs[@]}")
if [[ "$(cat "$cache/base.key" 2>/dev/null)" != "$base_key" ]]; then
  r=$tmp/base
  new_root "$r"
  : >"$tmp/elves"
  cp /bin/busybox "$r/usr/bin/busybox"
  for a in $(/bin/busybox --list-full); do ln -s /usr/bin/busybox "$r/$a" 2>/dev/null || true; done
  for p in "${paths[@]}" "$provider"; do
    # a busybox applet of the same name (ip) gives way to the real tool
    find "$r/usr" -lname /usr/bin/busybox -name "$(basename "$p")" -delete
    put "$r" "$p" "$p"
  done
  put "$r" "$driver" "$driver"
  put "$r" "$libgcc" /usr/lib/x86_64-linux-gnu/libgcc_s.so.1
  put_libraries "$r"
  mkdir -p "$r/lib/modules"
  cp "$kdir"/modules/* "$kdir/modules.list" "$r/lib/modules/"
  echo 'root:x:0:0:root:/root:/bin/sh' >"$r/etc/passwd"
  echo 'root:x:0:' >"$r/etc/group"
  install -m755 "$here/init" "$r/init"
  archive "$r" "$cache/base.cpio.gz"
  echo "$base_key" >"$cache/base.key"
fi

echo "kernel=$kdir/image"
echo "initrd=$cache/base.cpio.gz"

# ---- extras: the --file arguments ----------------------------------------------
((${#files[@]})) || exit 0
srcs=()
for spec in "${files[@]}"; do
  src=${spec%%:*}
  [[ -e $src ]] || die "no such file: $src (--file $spec)"
  [[ $(basename "$src") =~ $dropin_name && $(readlink -f "$src") != /usr/lib/* ]] &&
    die "$src is ibfab's drop-in library; the guest runs rdma-core's (--file $spec)"
  if [[ -d $src ]]; then
    while read -r f; do srcs+=("$f"); done < <(find -L "$src" -type f | LC_ALL=C sort)
  else
    srcs+=("$src")
  fi
done
extras_key=$(printf '%s\n' "${files[@]}" | cat - <(key "$here/build.sh" "${srcs[@]}") | sha256sum | cut -c1-16)
extras=$cache/extras-$extras_key.cpio.gz
if [[ ! -f $extras ]]; then
  r=$tmp/extras
  new_root "$r"
  : >"$tmp/elves"
  for spec in "${files[@]}"; do
    src=${spec%%:*}
    dest=$(realpath -s "$src")
    [[ $spec == *:* ]] && dest=${spec#*:}
    [[ $dest == /* ]] || die "the guest path must be absolute: $dest (--file $spec)"
    put "$r" "$src" "$dest"
  done
  put_libraries "$r"
  archive "$r" "$extras"
  # Keep the newest few extras archives: each run's files differ.
  ls -t "$cache"/extras-*.cpio.gz | tail -n +9 | xargs -r rm -f
fi
echo "initrd=$extras"
