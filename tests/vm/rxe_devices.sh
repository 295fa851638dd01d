#!/bin/sh
# Runs in the Soft-RoCE VM (scripts/rxe-vm/run.sh): rxe0 and rxe1 exist,
# their ports are ACTIVE, and one RC exchange between them succeeds with
# rdma-core's ibv_rc_pingpong. Exit 0 when all three hold, 1 otherwise.
fails=0
check() {  # check NAME COMMAND...: run it, report it
  if "$@"; then echo "PASS $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}

for dev in rxe0 rxe1; do
  ibv_devinfo -d $dev >"$IBFAB_VM_OUT/devinfo.$dev" 2>&1
  cat "$IBFAB_VM_OUT/devinfo.$dev"
  name="$dev PORT_ACTIVE" check grep -q 'state:[[:space:]]*PORT_ACTIVE' "$IBFAB_VM_OUT/devinfo.$dev"
done

# ibv_rc_pingpong: the server on rxe1 listens on TCP 18515 (0x4853) for the
# client's QP number and GID; once it listens (at most 10 s), the client on
# rxe0 connects to 10.0.0.2. Each side gives up after 30 s.
timeout 30 ibv_rc_pingpong -d rxe1 -g "$IBFAB_VM_RXE1_GID" -n 100 >/tmp/server 2>&1 &
server=$!
listening() { cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$2 ~ /:4853$/ && $4 == "0A" {found = 1} END {exit !found}'; }
i=0
until listening || [ $i -ge 100 ]; do i=$((i + 1)); usleep 100000; done
timeout 30 ibv_rc_pingpong -d rxe0 -g "$IBFAB_VM_RXE0_GID" -n 100 "$IBFAB_VM_RXE1_IP" >/tmp/client 2>&1
wait $server
server_rc=$?
echo "--- ibv_rc_pingpong server (rxe1):"; cat /tmp/server
echo "--- ibv_rc_pingpong client (rxe0):"; cat /tmp/client
name="rc_pingpong server rxe1" check [ $server_rc = 0 ]
name="rc_pingpong client rxe0 100 iters" check grep -q '^100 iters' /tmp/client
name="rc_pingpong client's peer is rxe1" check grep -q 'remote address: .* GID ::ffff:10.0.0.2$' /tmp/client
exit $((fails > 0))
