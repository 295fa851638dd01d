#!/bin/sh
# Runs in the Soft-RoCE VM for tests/vm/runner.sh: runs ELF --help with the
# dynamic loader's trace of the libraries it loads in $IBFAB_VM_OUT/libs,
# its exit status in $IBFAB_VM_OUT/status.
LD_DEBUG=libs "$1" --help >/dev/null 2>"$IBFAB_VM_OUT/libs"
echo $? >"$IBFAB_VM_OUT/status"
