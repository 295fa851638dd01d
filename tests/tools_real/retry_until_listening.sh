#!/bin/sh
# usage: retry_until_listening.sh DEADLINE_S -- RDMA_CM_CLIENT ARGS...
#
# Runs an rdma_cm UD client (udaddy -s ...) that was started once its
# server printed that it is starting, which it does before rdma_listen: an
# attempt that came first is refused with "service ID not supported"
# (RDMA_CM_EVENT_UNREACHABLE, error 1, and the client exits). Such an
# attempt is run again, until one is not refused or DEADLINE_S seconds
# passed; the last attempt's output is printed and its status returned.
[ $# -ge 3 ] && [ "$2" = "--" ] || { sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 2; }
deadline=$(( $(date +%s) + $1 )); shift 2
refused=0
while :; do
  out=$("$@" 2>&1); status=$?
  if [ $status -ne 0 ] && printf '%s\n' "$out" | grep -q "RDMA_CM_EVENT_UNREACHABLE, error: 1" \
     && [ "$(date +%s)" -lt $deadline ]; then
    refused=$((refused + 1))
    continue
  fi
  printf '%s\n' "$out"
  echo "retry_until_listening: $refused attempt(s) refused before the server listened; status $status"
  exit $status
done
