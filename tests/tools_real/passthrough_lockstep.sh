#!/bin/bash
# real.passthrough_lockstep_*: a scenario's hosts shared by two
# ibfab-passthrough processes (--hosts, --link) in lockstep, each under
# `ibfab exec` on a host of its own of an `ibfab serve --every-host-local`
# (the machine's network: the link is TCP on localhost). Both must exit 0
# and write the same records, which must agree with RECORDED (the same
# scenario's run on rxe). With CASE no-peer: the listening process, whose
# peer never comes, says so in one line and exits 2.
# usage: passthrough_lockstep.sh IBFAB PASSTHROUGH SCENARIO RECORDED|no-peer
set -u
ibfab=$1 passthrough=$2 scenario=$3 recorded=$4
dir=$(mktemp -d)
trap 'kill $serve 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
"$ibfab" serve --topology fat-tree:2:4 --socket "$dir/s" --every-host-local >"$dir/serve.log" 2>&1 &
serve=$!
for _ in $(seq 100); do grep -q '^ready' "$dir/serve.log" && break; sleep 0.1; done
grep -q '^ready' "$dir/serve.log" || { echo "FAIL: the engine did not start"; cat "$dir/serve.log"; exit 1; }
port=$((20000 + RANDOM % 20000))
run() {  # NODE HOSTS MAP LINK OUT
  "$ibfab" exec --socket "$dir/s" --node "$1" --no-device-view -- "$passthrough" "$scenario" --map "$3" --hosts "$2" \
    --link "$4" --timeout-ms 3000 --out "$5"
}
if [ "$recorded" = no-peer ]; then
  out=$(run H1 H1,H4 H1=ibfab0@10.1.0.1,H2=x,H3=x,H4=ibfab3@10.1.0.4 listen:$port "$dir/a.jsonl" 2>&1)
  rc=$?
  echo "$out"
  [ $rc = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "no peer connected to port $port" &&
    { echo "PASS"; exit 0; }
  echo "FAIL: exit $rc"
  exit 1
fi
run H1 H1,H4 H1=ibfab0@10.1.0.1,H2=x,H3=x,H4=ibfab3@10.1.0.4 listen:$port "$dir/a.jsonl" >"$dir/a.log" 2>&1 &
a=$!
run H2 H2,H3 H1=x,H2=ibfab0@10.1.0.2,H3=ibfab2@10.1.0.3,H4=x 127.0.0.1:$port "$dir/b.jsonl" >"$dir/b.log" 2>&1
rb=$?
wait $a
ra=$?
cat "$dir/a.log" "$dir/b.log"
[ $ra = 0 ] && [ $rb = 0 ] || { echo "FAIL: exit $ra (H1,H4) and $rb (H2,H3)"; exit 1; }
cmp "$dir/a.jsonl" "$dir/b.jsonl" || { echo "FAIL: the two processes wrote different records"; exit 1; }
"$ibfab" validate "$scenario" --real "$recorded" --model "$dir/a.jsonl" | tail -1
[ "${PIPESTATUS[0]}" = 0 ] && echo PASS
