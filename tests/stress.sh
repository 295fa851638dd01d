#!/bin/sh
# The stress mode: the engine's and the libraries' tests (tests/server,
# tests/api) and the quick real-program tests served by `ibfab serve`,
# RUNS times in a row with two CPU-bound processes running beside them, so
# that a test that waits for a time rather than for the thing itself shows
# up as a failure. Stops at the first run with a failure and names the
# failed tests; ends with "N of RUNS passed"; exit status 0 only when every
# run passed.
#
#   tests/stress.sh [-b BUILD] [-n RUNS] [-j JOBS] [-R REGEX] [-E REGEX]
#
# -b: the build directory (default build); -n: runs (20); -j: ctest's jobs
# (2); -R / -E: ctest's include / exclude regex over the test names
# (default: every test of tests/server and tests/api, and the real.* tests
# below). `make stress` runs it with the defaults.
set -u
build=build runs=20 jobs=2 exclude=''
regex='^test_[a-z0-9_]+\.|^real\.(saquery_(nodes|groups|path|members)|ibv_ud_pingpong(_grh|_s64|_events)?|ib_send_bw_mcast(_s64)?|ib_send_lat_mcast|mckey(_routed|_send_only|_no_loopback|_ipv6|_unmapped|_ipoib_ps|_no_route|_send_only_refused)?|udaddy(_no_server)?|rdma_core_rdmacm_ud|verbs_client_killed|order_(leave|destroy|exit)|partitions_udaddy_(in|across)_tenants?|one_member_mft_H[13])$'
while getopts b:n:j:R:E: opt; do
  case $opt in
    b) build=$OPTARG ;;
    n) runs=$OPTARG ;;
    j) jobs=$OPTARG ;;
    R) regex=$OPTARG ;;
    E) exclude=$OPTARG ;;
    *) echo "usage: $0 [-b BUILD] [-n RUNS] [-j JOBS] [-R REGEX] [-E REGEX]" >&2; exit 2 ;;
  esac
done
[ -f "$build/CTestTestfile.cmake" ] || { echo "$0: $build is no configured build directory" >&2; exit 2; }
# ctest in each directory runs only the tests that directory registers.
dirs=''
for d in tests/server tests/api tests/tools_real; do
  [ -f "$build/$d/CTestTestfile.cmake" ] && dirs="$dirs $build/$d"
done

# Two CPU-bound processes, ended with the script however it ends.
yes > /dev/null &
hog1=$!
yes > /dev/null &
hog2=$!
trap 'kill "$hog1" "$hog2" 2>/dev/null' EXIT
trap 'exit 130' INT TERM

log=$(mktemp /tmp/ibfab-stress.XXXXXX)
passed=0
run=1
while [ "$run" -le "$runs" ]; do
  status=0
  for d in $dirs; do
    (cd "$d" && ctest -j "$jobs" -R "$regex" ${exclude:+-E "$exclude"} --output-on-failure) > "$log" 2>&1 || status=1
    count=$(grep -c 'Test *#' "$log")
    if [ "$status" != 0 ]; then
      echo "run $run: failed in ${d#"$build"/}:"
      sed -n '/The following tests FAILED/,$p' "$log"
      echo "(the whole output: $log)"
      break
    fi
    [ "$count" = 0 ] || echo "run $run: ${d#"$build"/}: $count tests passed"
  done
  [ "$status" = 0 ] || break
  passed=$((passed + 1))
  run=$((run + 1))
done
echo "$passed of $runs passed"
[ "$status" = 0 ] && rm -f "$log"
[ "$passed" = "$runs" ]
