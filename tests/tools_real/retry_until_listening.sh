#!/bin/sh
# usage: retry_until_listening.sh DEADLINE_S [--refused REGEX] -- RDMA_CM_CLIENT ARGS...
#
# Runs an rdma_cm client that was started once its server printed that it
# is starting, which servers do before rdma_listen: an attempt that came
# first is refused, and the client exits. By default that is a UD client's
# "service ID not supported" (udaddy: RDMA_CM_EVENT_UNREACHABLE, error 1);
# with --refused, output matching REGEX (an extended regular expression:
# a connected client's REJECTED with reason 8, invalid service ID, as the
# client prints it). Such an attempt is run again, until one is not
# refused or DEADLINE_S seconds passed; the last attempt's output is
# printed and its status returned.
usage() { sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 2; }
[ $# -ge 3 ] || usage
deadline=$(( $(date +%s) + $1 )); shift
refused_re="RDMA_CM_EVENT_UNREACHABLE, error: 1"
if [ "$1" = "--refused" ]; then
  [ $# -ge 4 ] || usage
  refused_re=$2; shift 2
fi
[ "$1" = "--" ] || usage
shift
refused=0
while :; do
  out=$("$@" 2>&1); status=$?
  if printf '%s\n' "$out" | grep -Eq "$refused_re" && [ "$(date +%s)" -lt $deadline ]; then
    refused=$((refused + 1))
    continue
  fi
  printf '%s\n' "$out"
  echo "retry_until_listening: $refused attempt(s) refused before the server listened; status $status"
  exit $status
done
