#!/usr/bin/env bash
# usage: scripts/sanitizer_ctest.sh BUILD_DIR [CTEST ARGS...]
#
# Runs CTest in a sanitizer build directory (IBFAB_SANITIZE; `make
# check-asan`, `make check-tsan`; docs/ARCHITECTURE.md, "Sanitizers") with
# the sanitizers' options and tests/sanitizers/*.supp. Every report of every
# process goes to BUILD_DIR/sanitizer-reports, and any report fails the run,
# printed at the end: a report in a background program or in the engine
# behind served.py fails it too, whether its test saw an exit status or not.
set -uo pipefail
build=$(cd "$1" && pwd) || exit 2
shift
supp=$(cd "$(dirname "$0")/../tests/sanitizers" && pwd)
reports=$build/sanitizer-reports
rm -rf "$reports" && mkdir -p "$reports"

export ASAN_OPTIONS="log_path=$reports/report:suppressions=$supp/asan.supp:detect_leaks=1:check_initialization_order=1:strict_init_order=1"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="log_path=$reports/report:print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp"
export TSAN_OPTIONS="log_path=$reports/report:suppressions=$supp/tsan.supp:second_deadlock_stack=1:history_size=4"

(cd "$build" && ctest "$@")
status=$?
shopt -s nullglob
found=("$reports"/*)
if ((${#found[@]})); then
  for f in "${found[@]}"; do
    echo "=== $f"
    cat "$f"
  done
  echo "sanitizer_ctest.sh: ${#found[@]} sanitizer report(s) in $reports (above)"
  exit 1
fi
exit $status
