#!/bin/sh
# usage: poll_until_output.sh DEADLINE_S REGEX -- COMMAND ARGS...
#
# Runs COMMAND again and again (every 0.1 s) until it exits 0 with output
# (stdout and stderr) matching the extended regular expression REGEX, then
# prints that output and exits 0; after DEADLINE_S seconds, prints the last
# output and why, and exits 1. For waiting on a state another program
# creates (a join the SA must show) rather than sleeping for it.
[ $# -ge 4 ] && [ "$3" = "--" ] || { sed -n '2,9s/^# \{0,1\}//p' "$0"; exit 2; }
deadline=$(( $(date +%s) + $1 )); regex=$2; shift 3
tries=0
while :; do
  tries=$((tries + 1))
  out=$("$@" 2>&1); status=$?
  if [ $status -eq 0 ] && printf '%s\n' "$out" | grep -Eq -- "$regex"; then
    printf '%s\n' "$out"
    echo "poll_until_output: $1 matched $regex after $tries run(s)"
    exit 0
  fi
  if [ "$(date +%s)" -ge $deadline ]; then
    printf '%s\n' "$out"
    echo "poll_until_output: $1 (last status $status) never matched $regex in $tries run(s)"
    exit 1
  fi
  sleep 0.1
done
