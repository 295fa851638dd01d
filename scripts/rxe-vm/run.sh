#!/usr/bin/env bash
# Boots the Soft-RoCE VM and runs a payload in it (docs/ARCHITECTURE.md,
# "The Soft-RoCE VM").
set -uo pipefail

usage() {
  cat <<'EOF'
usage: scripts/rxe-vm/run.sh [options] PAYLOAD [ARGS...]

Boots a stock Debian kernel under qemu (KVM when the CPU offers vmx/svm and
/dev/kvm is writable, else TCG) with the initramfs of build.sh, makes two
Soft-RoCE devices, rxe0 on veth0 (10.0.0.1) and rxe1 on veth1 (10.0.0.2),
the two ends of one veth pair, and runs PAYLOAD ARGS... in the guest as root.

With --pair: two VMs instead, each with rxe0 on its eth0, 10.0.1.1 (VM a)
and 10.0.1.2 (VM b), one Ethernet segment between them (qemu's socket
network over UDP on the host's loopback); PAYLOAD ARGS... runs in both.

The payload is a host file copied into the guest and executed there: a
script for busybox ash (#!/bin/sh; busybox runs its own applets before
$PATH, so iproute2 is /usr/sbin/ip) or an ELF that --file brought the
libraries of. Its environment:
  IBFAB_VM_RXE0_IP, IBFAB_VM_RXE1_IP    10.0.0.1, 10.0.0.2
  IBFAB_VM_RXE0_GID, IBFAB_VM_RXE1_GID  the index of each device's RoCE v2
                                        GID of that IPv4 address
  IBFAB_VM_OUT                          a directory: what the payload writes
                                        there comes back to the host
with --pair instead of the first two:
  IBFAB_VM_ROLE                         a or b
  IBFAB_VM_RXE0_IP, IBFAB_VM_PEER_IP    this VM's address, the other's
  IBFAB_VM_RXE0_GID                     rxe0's RoCE v2 GID index of it
The working directory is /tmp; locked memory is unlimited.

Options:
  --file SRC[:DEST]  put a host file or directory in the guest (build.sh
                     --help: default DEST is the same absolute path; an ELF
                     brings its libraries, never ibfab's drop-in ones)
  --out DIR          where the results go (default: a new directory under the
                     cache's runs/): DIR/console.log (the guest console),
                     DIR/stdout, DIR/stderr (the payload's, byte for byte),
                     DIR/files/ (what it wrote in $IBFAB_VM_OUT);
                     with --pair, all that in DIR/a and DIR/b
  --cache DIR        build.sh's cache (default: build/rxe-vm)
  --timeout S        each VM's life, boot included (default 480)
  --pair             two VMs, one rxe0 each (above)
  --quiet            do not copy the console to stdout as it comes
  --check            exit 0 if qemu can run here, 77 (saying why) if not

The console goes to stdout as it comes (each line also in console.log).
Exit status: the payload's (with --pair, a's if not 0, else b's); 2 with
one line "rxe-vm: ..." when a VM did not build, boot, set up or finish in
time (qemu is then killed: nothing is left running); 77 when qemu cannot
run on this machine at all (CTest's SKIP_RETURN_CODE). Payloads should not
use 2 and 77 themselves.
EOF
}

here=$(cd "$(dirname "$0")" && pwd)
cache=$here/../../build/rxe-vm
out=
timeout=480
quiet=0
check=0
pair=0
build_args=()
die() { echo "rxe-vm: $*" >&2; exit 2; }
while (($#)); do
  case $1 in
    --file|--out|--cache|--timeout) (($# > 1)) || die "$1 wants a value (see --help)" ;;&
    --file) build_args+=(--file "$2"); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --quiet) quiet=1; shift ;;
    --check) check=1; shift ;;
    --pair) pair=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    -*) echo "rxe-vm: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
t0=$EPOCHREALTIME

# ---- can qemu run here? -------------------------------------------------------
qemu=$(command -v qemu-system-x86_64) ||
  { echo "rxe-vm: SKIP: qemu-system-x86_64 is not installed (package qemu-system-x86; scripts/setup-deps.sh)"; exit 77; }
accels=$("$qemu" -accel help 2>&1) ||
  { echo "rxe-vm: SKIP: $qemu does not run here: $(echo "$accels" | head -1)"; exit 77; }
if [[ -w /dev/kvm ]] && grep -qwE 'vmx|svm' /proc/cpuinfo && grep -qx kvm <<<"$accels"; then
  accel=kvm cpu=host
elif grep -qx tcg <<<"$accels"; then
  accel=tcg cpu=max
else
  echo "rxe-vm: SKIP: $qemu offers neither KVM nor TCG"; exit 77
fi
((check)) && { echo "rxe-vm: qemu can run here ($accel)"; exit 0; }

(($#)) || die "no payload given (see --help)"
payload=$1
shift
[[ -f $payload ]] || die "no such payload: $payload"
[[ $timeout =~ ^[0-9]+$ && $timeout -gt 0 ]] || die "--timeout wants seconds, not '$timeout'"

# ---- the kernel and the initramfs ----------------------------------------------
mkdir -p "$cache" || die "cannot create $cache"
cache=$(cd "$cache" && pwd)
parts=$("$here/build.sh" --cache "$cache" "${build_args[@]}") || exit 2
kernel=$(sed -n 's/^kernel=//p' <<<"$parts")
mapfile -t initrds < <(sed -n 's/^initrd=//p' <<<"$parts")

if [[ -z $out ]]; then
  mkdir -p "$cache/runs"
  out=$(mktemp -d "$cache/runs/run.XXXXXX")
  # The newest few runs stay for reading.
  ls -dt "$cache"/runs/run.* | tail -n +11 | xargs -r rm -rf
fi
mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)
qemu_pids=()
reader_pids=()
work=
cleanup() {
  local p
  for p in "${qemu_pids[@]}" "${reader_pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  [[ -n $work ]] && rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "rxe-vm: interrupted; qemu stopped" >&2; exit 2' INT TERM HUP
work=$(mktemp -d "$cache/.run.XXXXXX") || die "cannot create a directory in $cache"

# The payload archive: /payload/payload and its arguments, quoted for ash.
mkdir -p "$work/root/payload"
install -m755 "$payload" "$work/root/payload/payload"
{
  printf 'set --'
  for a in "$@"; do printf " '%s'" "${a//\'/\'\\\'\'}"; done
  echo
} >"$work/root/payload/argv"
(cd "$work/root" && find . -mindepth 1 | cpio -o -H newc --quiet -R 0:0 | gzip -1) >"$work/payload.cpio.gz"
# The kernel unpacks concatenated archives in order, later files over earlier.
cat "${initrds[@]}" "$work/payload.cpio.gz" >"$work/initrd" || die "cannot write $work/initrd"

# ---- boot ------------------------------------------------------------------------
# since T: seconds from EPOCHREALTIME T to now, to the millisecond.
since() { local d=$(( ${EPOCHREALTIME/./} - ${1/./} )); printf '%d.%03d' $((d / 1000000)) $((d / 1000 % 1000)); }

# boot NAME ROLE QEMU_ARGS...: starts one VM, its results to $out/NAME
# (NAME empty: $out), its console shown as it comes unless --quiet (each
# line after "[NAME] " in the pair), the host time of its "ready" line noted
# in $work/NAME.boot_s.
boot() {
  local name=$1 role=$2 dir=$out${1:+/$1} t=$EPOCHREALTIME
  shift 2
  mkdir -p "$dir"
  rm -rf "$dir/files" "$dir/stdout" "$dir/stderr"
  : >"$dir/console.log"
  # timeout kills qemu (TERM, then KILL 10 s later) when the run takes too
  # long; qemu has no children.
  timeout -k 10 "$timeout" "$qemu" -machine q35,accel=$accel -cpu $cpu -m 1024 \
    -nodefaults -no-user-config -display none -no-reboot \
    -kernel "$kernel" -initrd "$work/initrd" -append "console=ttyS0 quiet panic=-1 ibfab_vm=$role" \
    -serial "file:$dir/console.log" -serial "file:$work/$name.ret.b64" "$@" \
    </dev/null >"$work/$name.qemu.err" 2>&1 &
  qemu_pids+=($!)
  tail -n +1 -f --pid=$! "$dir/console.log" 2>/dev/null |
    while IFS= read -r line; do
      line=${line%$'\r'}
      ((quiet)) || printf '%s%s\n' "${name:+[$name] }" "$line"
      [[ $line == "IBFAB-VM: ready "* ]] && since "$t" >"$work/$name.boot_s"
    done &
  reader_pids+=($!)
}

# collect NAME STATUS: that VM's payload status, its files unpacked in its
# directory; or a line saying why there is none, and status 2.
collect() {
  local name=$1 status=$2 dir=$out${1:+/$1} who=${1:+VM $1: }
  local console=$dir/console.log rc why bytes
  # marker WORD: the rest of the console line "IBFAB-VM: WORD ..." (first one).
  marker() { tr -d '\r' <"$console" | sed -n "s/^IBFAB-VM: $1 //p" | head -1; }
  rc=$(marker result | sed -n 's/^rc=\([0-9]*\)$/\1/p')
  if [[ -z $rc ]]; then
    why=$(marker 'setup failed:')
    if [[ -n $why ]]; then why="the guest's set-up failed: $why"
    elif ((status == 124 || status == 137)); then why="no result after $timeout s (timed out; qemu killed)"
    elif [[ -z $(marker booted) ]]; then why="the guest did not boot (qemu exit $status: $(head -1 "$work/$name.qemu.err"))"
    else why="the guest stopped before its result (qemu exit $status)"; fi
    echo "rxe-vm: $who$why; console: $console" >&2
    return 2
  fi
  bytes=$(marker files | sed -n 's/^bytes=//p')
  tr -d '\r' <"$work/$name.ret.b64" | base64 -d >"$work/$name.ret.tar" 2>/dev/null
  if [[ -z $bytes || $(stat -c %s "$work/$name.ret.tar") != "$bytes" ]]; then
    echo "rxe-vm: $who""the guest's files came back incomplete ($(stat -c %s "$work/$name.ret.tar") of ${bytes:-?} bytes); console: $console" >&2
    return 2
  fi
  tar -C "$dir" -xf "$work/$name.ret.tar" || { echo "rxe-vm: cannot unpack the guest's files into $dir" >&2; return 2; }
  echo "rxe-vm: ${who}payload exit $rc; boot $(cat "$work/$name.boot_s" 2>/dev/null || echo ?) s (qemu start to ready)"
  return "$rc"
}

echo "rxe-vm: booting $(basename "$(dirname "$kernel")")/$(basename "$kernel") under qemu ($accel), results in $out"
if ((pair)); then
  # Two VMs, one rxe0 each on eth0, one Ethernet segment: qemu's socket
  # network over UDP on the host's loopback, each VM sending to the other's
  # port (no listener to wait for).
  port=$((20000 + RANDOM % 20000))
  boot a a -smp 1 -netdev socket,id=n0,udp=127.0.0.1:$((port + 1)),localaddr=127.0.0.1:$port \
    -device virtio-net-pci,netdev=n0,mac=52:54:00:00:01:0a
  boot b b -smp 1 -netdev socket,id=n0,udp=127.0.0.1:$port,localaddr=127.0.0.1:$((port + 1)) \
    -device virtio-net-pci,netdev=n0,mac=52:54:00:00:01:0b
else
  boot "" single -smp 2
fi
statuses=()
for p in "${qemu_pids[@]}"; do wait "$p"; statuses+=($?); done
qemu_pids=()
wait "${reader_pids[@]}"
reader_pids=()

# ---- results ---------------------------------------------------------------------
if ((pair)); then
  collect a "${statuses[0]}"; rc_a=$?
  collect b "${statuses[1]}"; rc_b=$?
  ((rc_a == 2 || rc_b == 2)) && rc=2 || rc=$((rc_a ? rc_a : rc_b))
else
  collect "" "${statuses[0]}"; rc=$?
fi
echo "rxe-vm: exit $rc, whole run $(since "$t0") s; results in $out"
exit "$rc"
