#!/bin/sh
# Runs in the Soft-RoCE VM for tests/vm/runner.sh: prints its arguments one
# per line on stdout, a line on stderr, writes a file in $IBFAB_VM_OUT and
# a file of the devices it sees, and exits 3.
for a in "$@"; do echo "arg<$a>"; done
echo "to stderr" >&2
echo "written in the guest" >"$IBFAB_VM_OUT/note.txt"
ls /sys/class/infiniband >"$IBFAB_VM_OUT/devices"
exit 3
