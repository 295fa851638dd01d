#!/bin/sh
# usage: mckey_send_only_members.sh MCKEY_ARGS...
#
# Runs `mckey -s -o MCKEY_ARGS` (a send-only sender) in the background and,
# while it is joined, prints the SA's MCMemberRecords (`saquery --smkey 1
# -m`) once they show a send-only member (ScopeState 0x28: polled, within
# 30 s, see poll_until_output.sh); then waits for mckey. Exits 0 only if
# both the poll and mckey exit 0 (each status is printed).
[ $# -ge 1 ] || { sed -n '2,8s/^# \{0,1\}//p' "$0"; exit 2; }
stdbuf -oL mckey -s -o "$@" &
mckey=$!
"$(dirname "$0")/poll_until_output.sh" 30 'ScopeState[.]+0x28' -- saquery --smkey 1 -m
poll=$?
wait $mckey
status=$?
echo "mckey_send_only_members: saquery poll status $poll, mckey status $status"
[ $poll -eq 0 ] && [ $status -eq 0 ]
