#!/bin/bash
# vm.validate_*: one scenario of the validation corpus run both ways. The
# real run is ibfab-passthrough on rxe0/rxe1 inside the Soft-RoCE VM
# (rdma-core's own libraries, Debian 12's kernel); the model's is made by
# `ibfab validate` itself, which compares the two step by step. Exit:
# validate's (0 every step agrees, 1 one does not, 2 a run could not be
# made); 77 where qemu cannot run. A step waits 5 s at most for its events
# (an expect that must time out, such as a send RoCE refuses, costs that).
# usage: validate.sh RUN_SH CACHE OUT IBFAB PASSTHROUGH SCENARIO MAP
set -u
run_sh=$1 cache=$2 out=$3 ibfab=$4 passthrough=$5 scenario=$6 map=$7
rm -rf "$out"
mkdir -p "$out"
payload="$out/payload.sh"
cat >"$payload" <<PAYLOAD
#!/bin/sh
/opt/ibfab-passthrough /opt/scenario.yaml --map $map --timeout-ms 5000 --out "\$IBFAB_VM_OUT/real.jsonl"
echo "ibfab-passthrough exit \$?"
PAYLOAD
chmod +x "$payload"
"$run_sh" --quiet --cache "$cache" --out "$out/vm" --file "$passthrough:/opt/ibfab-passthrough" \
  --file "$scenario:/opt/scenario.yaml" "$payload"
rc=$?
[ $rc = 77 ] && exit 77
cat "$out/vm/stdout" "$out/vm/stderr" 2>/dev/null
if [ $rc != 0 ] || [ ! -s "$out/vm/files/real.jsonl" ]; then
  echo "validate.sh: the VM made no real run (run.sh exit $rc); console: $out/vm/console.log"
  exit 2
fi
"$ibfab" validate "$scenario" --real "$out/vm/files/real.jsonl"
