#!/bin/sh
# `ibfab serve` and `ibfab exec` as an unprivileged user (nobody): where
# unprivileged user namespaces work, the program sees its host's view from
# inside one (as uid 0 there, /dev/infiniband as empty files, a network of
# its own, which exec says); where they do not, exec fails at once with a
# message saying what to do, and --no-device-view still runs the program.
#   unprivileged_view.sh IBFAB
# Exit 77 (skipped) when nobody cannot run IBFAB (a build below a private
# directory) or the test is not run as root.
set -u
ibfab=$1
as_nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }
[ "$(id -u)" = 0 ] || { echo "needs root to become nobody"; exit 77; }
as_nobody test -x "$ibfab" || { echo "nobody cannot run $ibfab"; exit 77; }
dir=$(mktemp -d /tmp/ibfab-unprivileged.XXXXXX)
chmod 0777 "$dir"
trap 'kill "$serve" 2>/dev/null; wait "$serve" 2>/dev/null; rm -rf "$dir"' EXIT
# setpriv itself, not a function's subshell, so that $! is the engine's pid
# (setpriv execs it) and the trap ends it.
setpriv --reuid 65534 --regid 65534 --clear-groups "$ibfab" serve --topology fat-tree:2:4 --socket "$dir/s.sock" \
  > "$dir/serve.log" 2>&1 &
serve=$!
# Waits for the line itself (tail follows the log as it grows and ends when
# grep has it, or after 60 s).
timeout 60 tail -n +1 -f "$dir/serve.log" | grep -q -m 1 '^ready$' || { cat "$dir/serve.log"; exit 1; }
status=0
if as_nobody unshare --user true 2>/dev/null; then
  out=$(cd "$dir" && as_nobody "$ibfab" exec --node H3 --socket "$dir/s.sock" -- sh -c \
    'id -u; cat /sys/class/infiniband/ibfab0/ports/1/state; test -f /dev/infiniband/uverbs0 && echo uverbs0 is a file; ip -o -4 addr show ib0' 2>&1)
  echo "$out"
  for want in '^0$' '^4: ACTIVE$' '^uverbs0 is a file$' 'inet 10\.1\.0\.3/16' 'no fabric network beside the engine'; do
    echo "$out" | grep -q -- "$want" || { echo "missing: $want"; status=1; }
  done
else
  out=$(cd "$dir" && as_nobody "$ibfab" exec --node H3 --socket "$dir/s.sock" -- true 2>&1)
  code=$?
  echo "$out"
  [ "$code" = 2 ] || { echo "exit status $code, expected 2"; status=1; }
  echo "$out" | grep -q -- '--no-device-view' || { echo "the message does not say what to do"; status=1; }
fi
out=$(cd "$dir" && as_nobody "$ibfab" exec --no-device-view --node H3 --socket "$dir/s.sock" -- ibstat 2>&1)
echo "$out" | grep -q "CA 'ibfab0'" || { echo "$out"; echo "--no-device-view: ibstat failed"; status=1; }
[ "$status" = 0 ] && echo "unprivileged: passed"
exit "$status"
