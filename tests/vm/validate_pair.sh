#!/bin/bash
# vm.validate_pair_*: one scenario of the validation corpus run both ways,
# its hosts on two machines. The real run is two ibfab-passthrough
# processes in lockstep (--hosts, --link), one in each VM of
# `run.sh --pair` on its rxe0, joined by TCP over the VMs' own network;
# the model's is made by `ibfab validate`. Exit: validate's (0 every step
# agrees, 1 one does not, 2 a run could not be made); 77 where qemu cannot
# run.
# usage: validate_pair.sh RUN_SH CACHE OUT IBFAB PASSTHROUGH SCENARIO HOSTS_A HOSTS_B
set -u
run_sh=$1 cache=$2 out=$3 ibfab=$4 passthrough=$5 scenario=$6 hosts_a=$7 hosts_b=$8
rm -rf "$out"
mkdir -p "$out"
map=
for h in ${hosts_a//,/ } ${hosts_b//,/ }; do map="$map${map:+,}$h=rxe0"; done
payload="$out/payload.sh"
cat >"$payload" <<PAYLOAD
#!/bin/sh
if [ "\$IBFAB_VM_ROLE" = a ]; then
  hosts=$hosts_a link=listen:7411
else
  hosts=$hosts_b link=\$IBFAB_VM_PEER_IP:7411
fi
/opt/ibfab-passthrough /opt/scenario.yaml --map $map --hosts \$hosts --link \$link --timeout-ms 5000 \\
  --out "\$IBFAB_VM_OUT/real.jsonl"
echo "ibfab-passthrough exit \$?"
PAYLOAD
chmod +x "$payload"
"$run_sh" --pair --quiet --cache "$cache" --out "$out/vm" --file "$passthrough:/opt/ibfab-passthrough" \
  --file "$scenario:/opt/scenario.yaml" "$payload"
rc=$?
[ $rc = 77 ] && exit 77
cat "$out"/vm/a/stdout "$out"/vm/a/stderr "$out"/vm/b/stdout "$out"/vm/b/stderr 2>/dev/null
if [ $rc != 0 ] || [ ! -s "$out/vm/a/files/real.jsonl" ]; then
  echo "validate_pair.sh: the VMs made no real run (run.sh exit $rc); consoles: $out/vm/{a,b}/console.log"
  exit 2
fi
if ! cmp -s "$out/vm/a/files/real.jsonl" "$out/vm/b/files/real.jsonl"; then
  echo "validate_pair.sh: the two VMs wrote different records"
  exit 2
fi
"$ibfab" validate "$scenario" --real "$out/vm/a/files/real.jsonl"
