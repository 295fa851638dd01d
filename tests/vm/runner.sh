#!/usr/bin/env bash
# usage: tests/vm/runner.sh CACHE_DIR OUT_DIR ELF
# The Soft-RoCE VM runner's contract (scripts/rxe-vm/run.sh --help):
#  - the payload's exit status, its arguments as given (spaces, quotes),
#    its stdout and stderr apart, and the files it wrote come back;
#  - ELF, a program of this build linked with ibfab's drop-in libibverbs,
#    runs in the guest on rdma-core's; the drop-in itself is refused;
#  - a guest that does not finish in time gives exit status 2, one line
#    naming the time-out, and leaves no qemu running.
# Exit 0 when all hold, 1 otherwise, 77 when qemu cannot run here.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
run=$here/../../scripts/rxe-vm/run.sh
cache=$1 out=$2 elf=$3
"$run" --check || exit $?
fails=0
check() {  # check WHAT COMMAND...
  local what=$1; shift
  if "$@"; then echo "PASS $what"; else echo "FAIL $what"; fails=$((fails + 1)); fi
}

"$run" --cache "$cache" --out "$out/echo" --timeout 180 "$here/echo_payload.sh" "two words" "it's" ""
check "payload's exit status 3 is run.sh's" [ $? = 3 ]
check "arguments come through as given" diff <(printf 'arg<two words>\narg<it'"'"'s>\narg<>\n') "$out/echo/stdout"
check "stderr comes back apart" diff <(echo "to stderr") "$out/echo/stderr"
check "a file written in IBFAB_VM_OUT comes back" diff <(echo "written in the guest") "$out/echo/files/note.txt"
check "the guest has rxe0 and rxe1" diff <(printf 'rxe0\nrxe1\n') "$out/echo/files/devices"

dropin=$(ldd "$elf" | awk '$1 == "libibverbs.so.1" {print $3}')
check "$elf links a libibverbs outside the system's" \
  bash -c '[[ -n $1 && $1 != /lib/* && $1 != /usr/lib/* ]]' _ "$dropin"
"$run" --cache "$cache" --out "$out/loader" --timeout 180 --file "$elf" "$here/loader_payload.sh" "$elf"
check "the loader payload finishes" [ $? = 0 ]
"$elf" --help >/dev/null 2>&1
host_status=$?
check "an ELF of the build runs in the guest as on the host (--help, exit $host_status)" \
  diff <(echo $host_status) "$out/loader/files/status"
check "on rdma-core's libibverbs" grep -qE 'calling init: (/usr)?/lib/x86_64-linux-gnu/libibverbs.so.1$' "$out/loader/files/libs"
"$run" --cache "$cache" --file "$dropin" "$here/loader_payload.sh" >"$out/dropin.log" 2>&1
status=$?
cat "$out/dropin.log"
check "the drop-in libibverbs is refused with status 2" [ $status = 2 ]
check "and one line saying so" grep -qx "rxe-vm build: $dropin is ibfab's drop-in library; the guest runs rdma-core's (--file $dropin)" "$out/dropin.log"

"$run" --cache "$cache" --out "$out/hang" --timeout 20 "$here/hang_payload.sh" >"$out/hang.log" 2>&1
status=$?
cat "$out/hang.log"
check "a hung guest gives exit status 2" [ $status = 2 ]
check "and one line naming the time-out" grep -q '^rxe-vm: no result after 20 s (timed out; qemu killed)' "$out/hang.log"
check "and no qemu left running" bash -c "! ps -eo args | grep -v grep | grep -qF '$cache/.run.'"
exit $((fails > 0))
